import { expect } from 'chai';
import { HAND_MARKER, handWritten } from '../../bench/results-markdown.ts';

describe('handWritten (bench/RESULTS.md)', () => {
  const rendered = '# Benchmark results\n\nheader\n\n## Look-ups\n\nnew figures\n';

  it('keeps everything after the marker as it is', () => {
    const previous = `# Benchmark results\n\nold\n\n## Look-ups\n\nold figures\n\n${HAND_MARKER}\n\n## By hand\n\nmeasured apart\n\n## Also by hand\n\nmore\n`;
    expect(handWritten(previous, rendered)).to.equal('## By hand\n\nmeasured apart\n\n## Also by hand\n\nmore\n');
  });

  it('without the marker, keeps the sections the run did not render', () => {
    const previous = '# Benchmark results\n\nold\n\n## Look-ups\n\nold figures\n\n## By hand\n\nmeasured apart\n\n\n## Also by hand\n\nmore\n';
    expect(handWritten(previous, rendered)).to.equal('## By hand\n\nmeasured apart\n\n## Also by hand\n\nmore\n');
  });

  it('keeps nothing of a file that is all the bench\'s', () => {
    expect(handWritten(rendered, rendered)).to.equal('');
    expect(handWritten('', rendered)).to.equal('');
  });
});
