'use strict';
// Preloaded (NODE_OPTIONS=--require) into the Prisma CLI process only.
// Prisma 6.19's wasm schema engine leaves long timers armed after a command
// finishes, so every migrate command lingers 10 s (db push 60 s) before exit.
// Long timers never carry the CLI's own work, so letting them not hold the
// event loop open is safe; short ones are left alone.
const LONG_MS = 5000;

for (const name of ['setTimeout', 'setInterval']) {
  const original = globalThis[name];
  const patched = function (callback, delay, ...args) {
    const timer = original.call(this, callback, delay, ...args);
    if (typeof delay === 'number' && delay >= LONG_MS && timer && typeof timer.unref === 'function') timer.unref();
    return timer;
  };
  Object.defineProperties(patched, Object.getOwnPropertyDescriptors(original));
  globalThis[name] = patched;
}
