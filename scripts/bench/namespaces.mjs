// The namespaces the bench and the integration tests make for their commands: words to put before a command (a
// prefix) so that it runs in a user or mount namespace of its own, set up first by a shell script run inside it. One
// copy, imported by scripts/bench/ and test/integration/, so that both set up a limit, a full disk or a read-only
// folder the same way, and none of it touches the machine's own mounts or limits. No side effects on import.

/**
 * A user namespace of its own, where the caller is root (unprivileged user namespaces, or root), `setup` run there
 * first: a limit that is per user namespace, such as max_inotify_instances.
 * @param {string} setup
 * @returns {string[]}
 */
export function inUserNamespace(setup) {
  return ["unshare", "--user", "--map-root-user", "sh", "-c", `${setup} && exec "$@"`, "sh"];
}

/**
 * A user namespace whose inotify budget (/proc/sys/user/max_inotify_instances, per user and namespace) is `limit`
 * instances: 0, and every inotify_init1 fails with EMFILE, as on a node whose budget other software has taken.
 * @param {number} limit
 * @returns {string[]}
 */
export function withInotifyLimit(limit) {
  return inUserNamespace(`echo ${limit} > /proc/sys/user/max_inotify_instances`);
}

/**
 * A mount namespace of its own (root), `setup` run there first. With `after`, the command is not exec'd: `after`
 * runs once it has ended (to look at what it left on a mount only the namespace sees), and its status is kept.
 * @param {string} setup
 * @param {string} [after]
 * @returns {string[]}
 */
export function inMountNamespace(setup, after) {
  const run = after === undefined ? `exec "$@"` : `{ "$@"; rc=$?; ${after} exit $rc; }`;
  return ["unshare", "--mount", "sh", "-c", `${setup} && ${run}`, "sh"];
}

/**
 * A script for inMountNamespace: `folder` (which exists) made read-only, as a volume mounted read-only.
 * @param {string} folder
 * @returns {string}
 */
export function readOnlyFolder(folder) {
  return `mount --bind ${folder} ${folder} && mount -o remount,bind,ro ${folder}`;
}

/**
 * A script for inMountNamespace: a tmpfs of `size` at `folder` (which exists), filled: a full disk (ENOSPC).
 * @param {string} folder
 * @param {string} [size]
 * @returns {string}
 */
export function fullDisk(folder, size = "64k") {
  return `mount -t tmpfs -o size=${size} tmpfs ${folder} && (head -c 1M /dev/zero > ${folder}/filler 2>/dev/null || true)`;
}
