/**
 * `load` run once and its promise shared, except that a failure is forgotten: the next call loads again.
 * For values that never change while the process runs (the OpenAPI document, a bundled asset, the schema
 * name of a connection) and whose first attempt may fail for a passing reason.
 */
export function memoizeSuccess<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= load().catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}
