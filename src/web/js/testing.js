// The test-only entry of the WebRag client: `testHooks(rag)` makes the engine fail as a GPU
// driver reset, a bug or an aborted IndexedDB transaction would, for the fault tests
// (tests/e2e/faults.test.mjs, tabs.test.mjs, gpu.test.mjs). The package neither exports nor
// ships it (`./webrag.sh build` puts it in pkg/ for the tests); the published `WebRag` class has
// no testing methods.
export { testHooks } from './client.js';
