// A DNS server for the ready-probe tests, run inside a network namespace of the test's own: it listens on
// 127.0.0.1:53 (UDP), writes LISTENING once it does, drops every query until the file READY exists (a DNS server that
// is not up yet, whose queries time out), then answers every A query with 127.0.0.1 and every other type with no
// record. Each query is logged to LOG: "drop" or "answer", the name and the type.
// node fake-dns.mjs READY LISTENING LOG
import { createSocket } from "node:dgram";
import { appendFileSync, existsSync, writeFileSync } from "node:fs";

const [ready, listening, log] = process.argv.slice(2);
const socket = createSocket("udp4");
socket.on("message", (query, peer) => {
  let end = 12;
  const labels = [];
  while (query[end] !== 0) {
    labels.push(query.subarray(end + 1, end + 1 + query[end]).toString());
    end += query[end] + 1;
  }
  const type = query.readUInt16BE(end + 1);
  const answering = existsSync(ready);
  appendFileSync(log, `${answering ? "answer" : "drop"} ${labels.join(".")} ${type}\n`);
  if (!answering) return;
  const header = Buffer.from(query.subarray(0, 12));
  header[2] = 0x81; // a response to a recursive query
  header[3] = 0x80; // recursion available, NOERROR
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(type === 1 ? 1 : 0, 6);
  header.writeUInt32BE(0, 8);
  const answer = type === 1 ? Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]) : Buffer.alloc(0);
  socket.send(Buffer.concat([header, query.subarray(12, end + 5), answer]), peer.port, peer.address);
});
socket.bind(53, "127.0.0.1", () => writeFileSync(listening, ""));
