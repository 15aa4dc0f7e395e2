// Where Argo's shared volume is, and the files of one container in it (workflow/common/common.go, emissary.go).

/** Argo mounts its emptyDir at /var/run/argo in every container; BATON_ARGO_ROOT moves it (tests). */
export function argoRoot(env: NodeJS.ProcessEnv): string {
  return env.BATON_ARGO_ROOT || "/var/run/argo";
}

/**
 * ctr/NAME/: the folder of one container (its exitcode, signal, stdout, combined, debug markers). A container the
 * controller gave no ARGO_CONTAINER_NAME (a sidecar added by the workflow's podSpecPatch, as injectors such as
 * Istio's do: the controller wraps it with the emissary all the same) has ctr/ itself, as in Argo's emissary.
 */
export function containerDir(root: string, name: string): string {
  return name === "" ? `${root}/ctr` : `${root}/ctr/${name}`;
}

/** Where Argo's `main` wrapper writes the termination message of an error (util/util.go WriteTerminateMessage). */
export const TERMINATION_LOG = "/dev/termination-log";

/** The folder the controller mounts its offload ConfigMap at (common.EnvConfigMountPath). */
export const CONFIG_MOUNT = "/argo/config";

/**
 * A container name as a path segment: the controller's names are DNS labels, anything else would leave ctr/. Empty
 * is one (no ARGO_CONTAINER_NAME: containerDir's ctr/ itself).
 */
export function isSafeName(name: string): boolean {
  return name !== "." && name !== ".." && !name.includes("/") && !name.includes("\0");
}
