import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { summarizeExtractive } from './extractive-summary.ts';
import { extractHeuristic } from './heuristic-extract.ts';
import { createModels } from './models.ts';

const notes = [
  'The customer Acme ordered 40 chairs for the Berlin office. Delivery is planned for March 3.',
  'Acme asked to change the chair colour to grey. The weather in Berlin was cold.',
  'Acme confirmed the grey chairs and the March 3 delivery. Payment is due 30 days after delivery.',
];

describe('extractive summary', () => {
  it('keeps the most representative sentences, in their original order, deterministically', () => {
    const a = summarizeExtractive(notes, { maxSentences: 2 });
    expect(a).toBe(summarizeExtractive(notes, { maxSentences: 2 }));
    const picked = a.split(/(?<=\.) /);
    expect(picked).toHaveLength(2);
    for (const s of picked) expect(notes.join(' ')).toContain(s);
    expect(a).not.toContain('weather');
    expect(a).toContain('Acme');
  });

  it('respects the character budget and says each repeated sentence once', () => {
    const s = summarizeExtractive(['Same line here.', 'Same line here.', 'Another one.'], { maxChars: 40 });
    expect(s.length).toBeLessThanOrEqual(40);
    expect(s.match(/Same line here/g)?.length ?? 0).toBeLessThanOrEqual(1);
    expect(summarizeExtractive([])).toBe('');
  });
});

const page = `<!doctype html><html><head>
<title>Oak Chair – Shop</title>
<meta name="description" content="A solid oak chair for offices.">
<meta property="og:image" content="https://shop.example/chair.jpg">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Oak Chair",
 "sku":"OC-1","brand":{"@type":"Brand","name":"Woodly"},
 "offers":{"@type":"Offer","price":"1.299,00","priceCurrency":"EUR","availability":"https://schema.org/InStock"}}</script>
</head><body><h1>Oak Chair</h1>
<span itemprop="color">Natural</span>
<dl><dt>Weight</dt><dd>7.5 kg</dd></dl>
<p>Warranty: 5 years</p>
</body></html>`;

describe('heuristic extraction', () => {
  it('fills a schema from JSON-LD, meta tags, microdata and label/value patterns', () => {
    const data = extractHeuristic(page, {
      type: 'object',
      properties: {
        name: { type: 'string' },
        description: { type: 'string' },
        image: { type: 'string' },
        price: { type: 'number' },
        currency: { type: 'string' },
        availability: { type: 'boolean' },
        sku: { type: 'string' },
        brand: { type: 'string' },
        color: { type: 'string' },
        weight: { type: 'number' },
        warranty: { type: 'string' },
        missing: { type: 'string' },
      },
    });
    expect(data).toEqual({
      name: 'Oak Chair',
      description: 'A solid oak chair for offices.',
      image: 'https://shop.example/chair.jpg',
      price: 1299,
      currency: 'EUR',
      availability: true,
      sku: 'OC-1',
      brand: 'Woodly',
      color: 'Natural',
      weight: 7.5,
      warranty: '5 years',
    });
  });
});

describe('createModels without any model configured', () => {
  const models = createModels(loadConfig({}).models);
  it('marks every fallback result with the model that produced it', async () => {
    expect((await models.summarize(notes)).model).toBe('pier-local/extractive-v1');
    const ex = await models.extract(page, { properties: { name: { type: 'string' } } });
    expect(ex).toEqual({ data: { name: 'Oak Chair' }, model: 'pier-local/heuristic-extract-v1' });
    const e = await models.embed(['a', 'b']);
    expect(e).toMatchObject({ model: 'pier-local/hash-384-v1', dimension: 384 });
    expect(e.vectors).toHaveLength(2);
  });

  it('refuses a named model nobody can serve with MODEL_NOT_AVAILABLE', async () => {
    await expect(models.generateText({ model: 'gpt-4o-mini', prompt: 'hi' })).rejects.toMatchObject({
      code: 'MODEL_NOT_AVAILABLE',
      status: 404,
    });
  });
});
