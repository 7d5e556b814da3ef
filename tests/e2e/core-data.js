// The documents and queries of the core browser cases (tests/e2e/core-cases.js), shared with the
// test that asserts on them (tests/e2e/browsers.test.mjs).
export const DOCS = [
  { id: 'owls', text: '# Owls\n\nOwls are birds of prey that hunt small animals at night, flying silently.' },
  { id: 'mouse', text: '# Harvest mouse\n\nThe harvest mouse is a small rodent of Europe and Asia. It weaves nests in tall grass.' },
  { id: 'tea', text: '# Green tea\n\nGreen tea is steeped at about 80 degrees Celsius. Longjing tea comes from Hangzhou.' },
  { id: 'apollo', text: '# Apollo 11\n\nApollo 11 landed on the Moon in July 1969; Armstrong and Aldrin walked on its surface.' },
];
// Each query and the document it is about: every mode must put that document first.
export const QUERIES = [['which birds hunt at night', 'owls'], ['temperature for brewing tea', 'tea'], ['first moon landing', 'apollo']];
export const MODES = ['bm25', 'dense', 'hybrid', 'graph', 'hybrid+graph'];
// Documents only a real Markdown or HTML parse reads right (a title from `#` or `<title>`, a
// heading path, a script left out), and the queries that find them in BM25 with what each hit
// must show: the search build parses them with its parser module.
export const MARKUP_DOCS = [
  { id: 'lighthouse', format: 'markdown', text: '# Lighthouses\n\n## Fresnel lens\n\nA *Fresnel lens* focuses the beam of a lighthouse.\n' },
  { id: 'glacier', format: 'html', text: '<html><head><title>Glaciers</title><script>var zanzibarquux = 1;</script></head><body><h2>Ice flow</h2><p>A glacier is a slow river of ice.</p></body></html>' },
];
export const MARKUP_QUERIES = ['Fresnel lens beam', 'glacier river of ice', 'zanzibarquux'];
export const MARKUP_HITS = [
  { docId: 'lighthouse', title: 'Lighthouses', headingPath: ['Lighthouses', 'Fresnel lens'] },
  { docId: 'glacier', title: 'Glaciers', headingPath: ['Ice flow'] },
  null,
];
