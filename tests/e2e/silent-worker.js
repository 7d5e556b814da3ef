// A module worker that loads and never answers: what a hung worker start looks like to the page
// (tabs.test.mjs checks that `WebRag.open` gives up with WORKER_FAILED after `startTimeoutMs`).
setInterval(() => {}, 1 << 30);
