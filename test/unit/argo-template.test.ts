// The emissary's reading of Argo's Template (src/argo/template.ts): Go's encoding/json rules and the retryStrategy as
// ContainerSetTemplate.GetRetryStrategy gives it (pkg/apis/workflow/v1alpha1/container_set_template_types.go).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mainContainerNames, parseTemplate } from "../../src/argo/template.js";

const retryOf = (retryStrategy: unknown) => parseTemplate(JSON.stringify({ containerSet: { containers: [], retryStrategy } })).retry;

test("retryStrategy: retries as an integer or a string holding one, duration in Go syntax", () => {
  assert.deepEqual(retryOf(undefined), { attempts: 1, delayMs: 0 });
  assert.deepEqual(retryOf({ retries: null }), { attempts: 1, delayMs: 0 });
  assert.deepEqual(retryOf({ retries: 3 }), { attempts: 3, delayMs: 0 });
  assert.deepEqual(retryOf({ retries: "2", duration: "1.5s" }), { attempts: 2, delayMs: 1500 });
  assert.deepEqual(retryOf({ retries: "many" }), { attempts: 0, delayMs: 0 }, "intstr.IntValue: Atoi fails -> 0");
  assert.deepEqual(retryOf({ retries: 2, duration: "-1s" }), { error: "failed to get retry strategy: duration has to be positive, current duration: -1s" });
  assert.deepEqual(retryOf({ retries: 2, duration: "soon" }), { error: 'failed to get retry strategy: time: invalid duration "soon"' });
  assert.throws(() => retryOf({ retries: 1.5 }), /retries: 1\.5 is not an integer or a string/);
  assert.throws(() => retryOf({ retries: true }), /is not an integer or a string/);
});

test("Go's JSON: keys case-insensitive (the last match wins), null empty, unknown keys ignored, wrong types fail", () => {
  const t = parseTemplate('{"Sidecars": [{"NAME": "s"}], "sidecars": [{"name": "t"}], "outputs": null, "extra": {"x": [1]}}');
  assert.deepEqual(t.sidecarNames, ["t"]);
  assert.deepEqual(parseTemplate('{"sidecars": [{"name": "t"}], "SIDECARS": [{"name": "s"}]}').sidecarNames, ["s"], "not the exact one: the last");
  assert.deepEqual(t.parameterPaths, []);
  assert.deepEqual(parseTemplate("null").containers, []);
  assert.throws(() => parseTemplate('"x"'), /cannot unmarshal string into Template/);
  assert.throws(() => parseTemplate('{"sidecars": {}}'), /cannot unmarshal object into sidecars of type array/);
  assert.throws(() => parseTemplate('{"archiveLocation": {"archiveLogs": "yes"}}'), /of type bool/);
});

test("volume mounts are the container's, else the script's, else the container set's; main containers are the set's", () => {
  const mounts = (t: unknown) => parseTemplate(JSON.stringify(t)).volumeMountPaths;
  assert.deepEqual(mounts({ container: { volumeMounts: [{ mountPath: "/a" }] }, containerSet: { volumeMounts: [{ mountPath: "/c" }] } }), ["/a"]);
  assert.deepEqual(mounts({ script: { volumeMounts: [{ mountPath: "/b" }] } }), ["/b"]);
  assert.deepEqual(mounts({ containerSet: { volumeMounts: [{ mountPath: "/c" }] } }), ["/c"]);
  assert.deepEqual(mainContainerNames(parseTemplate("{}")), ["main"]);
  assert.deepEqual(mainContainerNames(parseTemplate('{"containerSet": {"containers": [{"name": "x"}, {"name": "y"}]}}')), ["x", "y"]);
});
