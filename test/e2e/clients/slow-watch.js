// slow-watch.js: a slow but progressing watch client written with the
// official JavaScript client, @kubernetes/client-node (pinned in
// package.json), over HTTP/1.1 (node-fetch). It reads the way a busy Node
// program does: its event callback blocks the event loop for a fixed time
// per event, so the socket is read only between events.
//
//   KUBECONFIG=... node slow-watch.js WATCH_PATH LABEL_SELECTOR MS_PER_EVENT
//
// It asks for initial events (sendInitialEvents=true) and blocks without
// spinning (Atomics.wait with a timeout on a value nobody changes).
'use strict';
const k8s = require('@kubernetes/client-node');

const [path, labelSelector, msText] = process.argv.slice(2);
const ms = Number(msText);
if (!path || !Number.isFinite(ms) || ms < 0) {
  console.error('usage: node slow-watch.js WATCH_PATH LABEL_SELECTOR MS_PER_EVENT');
  process.exit(2);
}
const kc = new k8s.KubeConfig();
kc.loadFromDefault();
const watch = new k8s.Watch(kc);
const never = new Int32Array(new SharedArrayBuffer(4));
watch
  .watch(
    path,
    {
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: '0',
      allowWatchBookmarks: true,
      labelSelector: labelSelector || undefined,
      timeoutSeconds: 3600,
    },
    () => {
      Atomics.wait(never, 0, 0, ms); // blocks this thread, and the event loop, for ms
    },
    (err) => {
      console.error('watch ended:', err ? err.message || err : 'no error');
      process.exit(1);
    },
  )
  .catch((err) => {
    console.error('watch failed:', err.message || err);
    process.exit(1);
  });
