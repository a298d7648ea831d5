// stuck-watch.js: a watch client written with the official JavaScript
// client, @kubernetes/client-node (pinned in package.json), over HTTP/1.1
// (node-fetch), that reads the way a real Node program does: its event
// callback blocks the event loop, so nothing reads the socket meanwhile.
//
//   KUBECONFIG=... node stuck-watch.js WATCH_PATH [LABEL_SELECTOR MS_PER_EVENT]
//
// It asks for initial events (sendInitialEvents=true). Without
// MS_PER_EVENT it prints "first event" on stdout after the first one, then
// blocks the event loop for good: a stuck client. With it, it blocks
// MS_PER_EVENT milliseconds per event: a slow but progressing one. It
// blocks without spinning (Atomics.wait on a value nobody changes).
'use strict';
const k8s = require('@kubernetes/client-node');

const [path, labelSelector, msText] = process.argv.slice(2);
const ms = msText === undefined ? undefined : Number(msText);
if (!path || (ms !== undefined && !(Number.isFinite(ms) && ms >= 0))) {
  console.error('usage: node stuck-watch.js WATCH_PATH [LABEL_SELECTOR MS_PER_EVENT]');
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
      if (ms !== undefined) {
        Atomics.wait(never, 0, 0, ms); // blocks this thread, and the event loop, for ms
        return;
      }
      process.stdout.write('first event\n');
      Atomics.wait(never, 0, 0); // blocks this thread, and the event loop, forever
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
