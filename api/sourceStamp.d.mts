export declare const UNKNOWN_COMMIT: "unknown";
export declare const COMMIT_PATTERN: RegExp;
export type SourceStamp = { version: string; commit: string };
export declare function sourceStamp(root: string): SourceStamp;
export declare function packageVersion(root: string): string;
export declare function checkoutCommit(root: string): string;
