// Takes the picture of one trace's page in Jaeger's UI with headless Chromium, driven through its DevTools protocol
// (Node's own WebSocket: no library), for scripts/tracing/jaeger-picture.sh. A plain `chromium --screenshot` cannot
// click: here the page is opened, drawn, and the row of the span that --open names is opened to show its attributes.
//
//   node scripts/tracing/screenshot.mjs URL OUT.png [--open OPERATION[:TEXT]] [--size WIDTHxHEIGHT]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, out, ...rest] = process.argv.slice(2);
if (!url || !out) {
  console.error("usage: node scripts/tracing/screenshot.mjs URL OUT.png [--open OPERATION[:TEXT]] [--size WIDTHxHEIGHT]");
  process.exit(2);
}
const option = (name) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
const [width, height] = (option("--size") ?? "1280x800").split("x").map(Number);
const open = option("--open");

const profile = mkdtempSync(join(tmpdir(), "baton-chromium-"));
const chromium = spawn(
  "chromium",
  ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", `--user-data-dir=${profile}`, `--window-size=${width},${height}`, "--remote-debugging-port=0", "about:blank"],
  { stdio: ["ignore", "ignore", "pipe"] },
);
let finished = false;
const guard = setTimeout(() => fail("Chromium did not draw the page within 60 s"), 60_000);

function fail(message) {
  console.error(`screenshot: ${message}`);
  chromium.kill("SIGKILL");
  rmSync(profile, { recursive: true, force: true });
  process.exit(1);
}

// Chromium says where its protocol listens on stderr: the event to wait for.
const browserUrl = await new Promise((resolve) => {
  let text = "";
  chromium.stderr.setEncoding("utf8").on("data", (chunk) => {
    text += chunk;
    const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
    if (match) resolve(match[1]);
  });
  chromium.on("exit", (code) => finished || fail(`Chromium exited (${code}):\n${text}`));
});
const port = new URL(browserUrl).port;
const target = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()).find((t) => t.type === "page");
const socket = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((resolve, reject) => {
  socket.onopen = resolve;
  socket.onerror = () => reject(new Error("no connection to Chromium's page"));
});

let nextId = 1;
const pending = new Map();
const waiters = [];
socket.onmessage = (message) => {
  const data = JSON.parse(message.data);
  if (data.id !== undefined) {
    const { resolve, reject } = pending.get(data.id);
    pending.delete(data.id);
    if (data.error) reject(new Error(data.error.message));
    else resolve(data.result);
  } else {
    for (const waiter of waiters.splice(0)) waiter(data);
  }
};
const send = (method, params = {}) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    socket.send(JSON.stringify({ id, method, params }));
  });
const evaluate = async (expression) => (await send("Runtime.evaluate", { expression, returnByValue: true })).result.value;
/** Waits until `expression` is true in the page: the UI draws after its own requests, which no event here reports. */
async function until(expression, what) {
  for (let i = 0; i < 300; i++) {
    if (await evaluate(expression)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  fail(`the page never showed ${what}`);
}

await send("Page.enable");
await send("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: false });
const loaded = new Promise((resolve) => {
  const wait = (event) => (event.method === "Page.loadEventFired" ? resolve() : waiters.push(wait));
  waiters.push(wait);
});
await send("Page.navigate", { url });
await loaded;
await until("document.querySelectorAll('.span-row').length > 0", "the trace's spans");
if (open) {
  // OPERATION[:TEXT]: the first row of that operation whose attributes hold TEXT; its bar opens its details, and its
  // attributes are shown as a table, one a line, rather than one line cut at the page's edge.
  const [operation, text = ""] = open.split(/:(.*)/s);
  const rows = await evaluate(`[...document.querySelectorAll('.span-row')].filter((r) => r.querySelector('.endpoint-name')?.textContent.trim() === ${JSON.stringify(operation)}).length`);
  let found = false;
  for (let i = 0; i < rows && !found; i++) {
    const row = `[...document.querySelectorAll('.span-row')].filter((r) => r.querySelector('.endpoint-name')?.textContent.trim() === ${JSON.stringify(operation)})[${i}]`;
    await evaluate(`${row}.querySelector('.span-view').click()`);
    await until("document.querySelector('.detail-row') !== null", "the span's details");
    await evaluate("document.querySelector('.detail-row .AccordianKeyValues--header').click()");
    await until("document.querySelector('.detail-row .KeyValueTable') !== null", "the span's attributes");
    found = await evaluate(`document.querySelector('.detail-row .KeyValueTable').textContent.includes(${JSON.stringify(text)})`);
    if (!found) {
      await evaluate(`${row}.querySelector('.span-view').click()`);
      await until("document.querySelector('.detail-row') === null", "the span's details closed");
    }
  }
  if (!found) fail(`no ${operation} span with ${JSON.stringify(text)} among its attributes`);
}
// Two frames for the layout to settle after the last change.
await evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
const { data } = await send("Page.captureScreenshot", { format: "png" });
writeFileSync(out, Buffer.from(data, "base64"));
clearTimeout(guard);
finished = true;
socket.close();
chromium.kill("SIGTERM");
await new Promise((resolve) => chromium.once("exit", resolve));
rmSync(profile, { recursive: true, force: true });
