import { buildOnce } from "./support/build";

/** Once per vitest run, before any test file: the API process the tests spawn is this checkout's build. */
export default function setup(): void {
  buildOnce();
}
