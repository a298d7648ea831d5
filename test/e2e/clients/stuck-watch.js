// stuck-watch.js: a watch client written with the official JavaScript
// client, @kubernetes/client-node (pinned in package.json), that stops
// reading the way a real Node program does: its event callback blocks the
// event loop, so nothing reads the socket any more.
//
//   KUBECONFIG=... node stuck-watch.js /api/v1/namespaces/NS/pods
//
// It asks for initial events (sendInitialEvents=true), prints "first event"
// on stdout after the first one, then blocks the event loop for good
// without spinning (Atomics.wait on a value nobody changes).
'use strict';
const k8s = require('@kubernetes/client-node');

const path = process.argv[2];
if (!path) {
  console.error('usage: node stuck-watch.js WATCH_PATH');
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
      timeoutSeconds: 3600,
    },
    () => {
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
