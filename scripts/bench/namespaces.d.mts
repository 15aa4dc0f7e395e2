// Types of namespaces.mjs, for the integration tests that import it (the bench's .mjs files are not type-checked).
export function inUserNamespace(setup: string): string[];
export function withInotifyLimit(limit: number): string[];
export function inMountNamespace(setup: string, after?: string): string[];
export function readOnlyFolder(folder: string): string;
export function fullDisk(folder: string, size?: string): string;
