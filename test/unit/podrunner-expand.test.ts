import { test } from "node:test";
import assert from "node:assert/strict";
import { expand } from "../../scripts/podrunner/expand.js";
import { containerEnv } from "../../scripts/podrunner/env.js";
import { parseManifest } from "../../scripts/podrunner/manifest.js";

const vars = new Map([["A", "1"], ["NAME", "world"]]);
const lookup = (n: string) => vars.get(n);

test("$(VAR) is replaced by a defined variable and left as written when undefined", () => {
  assert.equal(expand("hello $(NAME) $(MISSING)", lookup), "hello world $(MISSING)");
});

test("$$ is an escaped dollar, and other dollars are kept, as the kubelet does", () => {
  assert.equal(expand("$$(NAME) $$ $HOME $", lookup), "$(NAME) $ $HOME $");
  assert.equal(expand("$(unterminated", lookup), "$(unterminated");
  assert.equal(expand("$(A)$(A)", lookup), "11");
});

test("env values see only the entries before them; command and args see the whole list", () => {
  const [pod] = parseManifest(`
apiVersion: v1
kind: Pod
metadata: { name: p, namespace: ns }
spec:
  restartPolicy: Never
  containers:
    - name: c
      command: ["echo", "$(LATER)", "$(FIRST)"]
      args: ["$(POD)/$(NS)"]
      env:
        - { name: FIRST, value: "one" }
        - { name: SECOND, value: "$(FIRST)-$(LATER)" }
        - { name: LATER, value: "three" }
        - { name: POD, valueFrom: { fieldRef: { fieldPath: metadata.name } } }
        - { name: NS, valueFrom: { fieldRef: { fieldPath: metadata.namespace } } }
`);
  const { env, argv } = containerEnv(pod!, pod!.spec.containers[0]!, [{ container: "c", name: "FIRST", value: "uno" }]);
  assert.deepEqual(Object.fromEntries(env), { FIRST: "uno", SECOND: "uno-$(LATER)", LATER: "three", POD: "p", NS: "ns" });
  assert.deepEqual(argv, ["echo", "three", "uno", "p/ns"]);
});
