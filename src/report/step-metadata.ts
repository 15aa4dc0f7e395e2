import { writeFileAtomic } from "../base/atomic-write.js";

/** DIR/exitCode: the command's own exit code, as Tekton's step metadata has it. */
export function writeExitCodeFile(stepMetadataDir: string, exitCode: number): void {
  writeFileAtomic(`${stepMetadataDir}/exitCode`, String(exitCode));
}
