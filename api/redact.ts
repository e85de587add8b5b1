/**
 * How a URL may be shown: RPC and Redis URLs carry API keys and passwords in their user info, path and
 * query. The logger, the process-output filter, the config description and the RPC client all use this.
 */

/** Keeps scheme, host and port; drops user info, path and query, where providers put API keys. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const hidden = u.username || u.password || (u.pathname && u.pathname !== "/") || u.search;
    return `${u.protocol}//${u.host}${hidden ? "/***" : ""}`;
  } catch {
    return "(invalid url)";
  }
}

const URL_RE = /\b(?:https?|wss?|redis|rediss|postgres(?:ql)?):\/\/[^\s"'<>`]+/gi;

/** Punctuation a sentence puts after a URL ("…at http://host:8545: could not…"), not part of it. */
const TRAILING = /[.,:;)\]]+$/;

/** Every URL in `text` reduced to what redactUrl keeps (a sentence's punctuation after it kept as it was). */
export function redactUrls(text: string): string {
  return text.replace(URL_RE, (u) => {
    const tail = TRAILING.exec(u)?.[0] ?? "";
    return redactUrl(u.slice(0, u.length - tail.length)) + tail;
  });
}
