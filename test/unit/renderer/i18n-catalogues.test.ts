/**
 * The visitor catalogues are complete: every language has exactly English's keys (no missing, no extra),
 * plural keys carry exactly the forms `Intl.PluralRules` names for that language, every placeholder of the
 * English message appears in the translation, and no message is empty. A language may add a message's
 * forms for the avatar's grammatical gender (`<key>_female`, `<key>_male`, i18next's context) to any
 * English key; those follow the same rules. What each language says for each gender: test/unit/renderer/grammar.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LANGUAGE_CODES } from '../../../electron/contract.ts';
import { CATALOGUES, type Catalogue } from '../../../renderer/src/i18n/catalogues/index.ts';

const PLURAL = /_(zero|one|two|few|many|other)$/;
/** i18next context forms for the avatar's gender (before any plural suffix). */
const CONTEXT = /_(female|male)(?=$|_(?:zero|one|two|few|many|other)$)/;

function flatten(cat: Catalogue, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(cat)) {
    if (typeof v === 'string') out.set(prefix + k, v);
    else for (const [kk, vv] of flatten(v, `${prefix}${k}.`)) out.set(kk, vv);
  }
  return out;
}

/** The catalogue without its gender forms, and the gender forms as their own catalogues ("female" → …). */
function splitContexts(flat: Map<string, string>): { plain: Map<string, string>; contexts: Map<string, Map<string, string>> } {
  const plain = new Map<string, string>();
  const contexts = new Map<string, Map<string, string>>();
  for (const [k, v] of flat) {
    const m = CONTEXT.exec(k);
    if (!m) {
      plain.set(k, v);
      continue;
    }
    if (!contexts.has(m[1]!)) contexts.set(m[1]!, new Map());
    contexts.get(m[1]!)!.set(k.slice(0, m.index) + k.slice(m.index + m[0].length), v);
  }
  return { plain, contexts };
}

/** Base key → its messages ("idle.body" → the `_one`/`_other`… forms); plain keys map to themselves. */
function byBase(flat: Map<string, string>): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const [k, v] of flat) {
    const m = PLURAL.exec(k);
    const base = m ? k.slice(0, m.index) : k;
    const form = m ? m[1]! : '';
    if (!out.has(base)) out.set(base, new Map());
    out.get(base)!.set(form, v);
  }
  return out;
}

const placeholders = (s: string) => new Set([...s.matchAll(/\{\{\s*(\w+)/g)].map((m) => m[1]!));

const english = byBase(flatten(CATALOGUES.en));

test('there is a catalogue for every language code, and no other', () => {
  assert.deepEqual(Object.keys(CATALOGUES).sort(), [...LANGUAGE_CODES].sort());
});

test('the English source has plural forms one and other for every plural key', () => {
  for (const [base, forms] of english) {
    if (forms.has('')) continue;
    assert.deepEqual([...forms.keys()].sort(), ['one', 'other'], base);
  }
});

for (const lang of LANGUAGE_CODES) {
  test(`${lang}: exactly the English keys, the plural forms of ${lang}, the same placeholders`, () => {
    const { plain, contexts } = splitContexts(flatten(CATALOGUES[lang]));
    const cat = byBase(plain);
    const missing = [...english.keys()].filter((k) => !cat.has(k));
    const extra = [...cat.keys()].filter((k) => !english.has(k));
    assert.deepEqual(missing, [], `${lang} is missing keys`);
    assert.deepEqual(extra, [], `${lang} has keys English does not`);
    const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories.slice().sort();
    for (const [base, enForms] of english) {
      const forms = cat.get(base)!;
      if (enForms.has('')) {
        assert.deepEqual([...forms.keys()], [''], `${lang} ${base} must not be plural`);
      } else {
        assert.deepEqual([...forms.keys()].sort(), categories, `${lang} ${base}: plural forms`);
      }
      const wanted = placeholders([...enForms.values()].join(' '));
      for (const [form, message] of forms) {
        assert.ok(message.trim().length > 0, `${lang} ${base}${form ? `_${form}` : ''} is empty`);
        for (const p of placeholders(message)) assert.ok(wanted.has(p) || p === 'count', `${lang} ${base}: unknown placeholder {{${p}}}`);
      }
      // Every placeholder but the count (Arabic's "one"/"two" forms spell the number out) reaches the visitor.
      const used = placeholders([...forms.values()].join(' '));
      for (const p of wanted) if (p !== 'count') assert.ok(used.has(p), `${lang} ${base}: drops {{${p}}}`);
    }
    // Gender forms: of an English key, with the same plural forms and placeholders as the plain message.
    for (const [gender, flat] of contexts) {
      for (const [base, forms] of byBase(flat)) {
        assert.ok(english.has(base), `${lang} ${base}_${gender}: no such English key`);
        assert.deepEqual([...forms.keys()].sort(), [...cat.get(base)!.keys()].sort(), `${lang} ${base}_${gender}: the plain message's forms`);
        const wanted = placeholders([...english.get(base)!.values()].join(' '));
        for (const message of forms.values()) {
          assert.ok(message.trim().length > 0, `${lang} ${base}_${gender} is empty`);
          for (const p of placeholders(message)) assert.ok(wanted.has(p) || p === 'count', `${lang} ${base}_${gender}: unknown placeholder {{${p}}}`);
          for (const p of wanted) if (p !== 'count') assert.ok(placeholders(message).has(p), `${lang} ${base}_${gender}: drops {{${p}}}`);
        }
      }
    }
  });
}
