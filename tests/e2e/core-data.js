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
