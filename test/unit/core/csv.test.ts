/**
 * One CSV cell (core/csv.ts) for the ledger's export and the fleet console's spend: quoted per RFC 4180, and
 * never read by a spreadsheet as a formula, whatever a kiosk or a visitor put in it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { csvCell } from '../../../electron/core/csv.ts';

describe('csvCell', () => {
  it('writes nothing for a missing value and numbers as they are (a negative figure stays a number)', () => {
    assert.deepEqual([null, undefined, 0, -12.5, 42].map(csvCell), ['', '', '0', '-12.5', '42']);
  });
  it('defuses a string that a spreadsheet would read as a formula, after any leading blanks or controls', () => {
    const cases: [string, string][] = [
      ['=SUM(A1)', "'=SUM(A1)"],
      ['+1', "'+1"],
      ['-1', "'-1"],
      ['@cmd', "'@cmd"],
      ['  =1', "'  =1"],
      ['\u200b=1', "'\u200b=1"],
      ['\uFF1D1', "'\uFF1D1"],
      ['\tx', "'\tx"],
    ];
    for (const [raw, cell] of cases) assert.equal(csvCell(raw), cell, JSON.stringify(raw));
  });
  it('leaves a string alone when a trigger is only inside it, a tab included', () => {
    assert.equal(csvCell('a\tb'), 'a\tb');
    assert.equal(csvCell('a=b'), 'a=b');
    assert.equal(csvCell('Ava - guide'), 'Ava - guide');
  });
  it('quotes a cell with a quote, comma or line break, doubling the quotes', () => {
    assert.equal(csvCell('say "hi", then go'), '"say ""hi"", then go"');
    assert.equal(csvCell('two\nlines'), '"two\nlines"');
    assert.equal(csvCell('\r\n=1'), `"'\r\n=1"`);
  });
});
