// Types of inotify.mjs, for the integration tests that import it (the bench's .mjs files are not type-checked).
export function openDescriptors(pid: number): { fd: string; target: string }[];
export function inotifyInstances(pid: number): number;
export function hasInotifyWatch(pid: number): boolean;
