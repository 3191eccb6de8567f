import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import { type DomNode, evaluateXPath, stringValue, xpathProblem } from './xpath.ts';

// XPath 1.0 on an HTML5 parse: real pages' HTML (unclosed tags, upper-case names, attributes without
// quotes) is read as a browser reads it, which the `xpath` package on an XML DOM cannot do.

const { document } = parseHTML(`<!doctype html><HTML><body>
<h1> Catalogue </h1>
<ul id=list><li class="card new"><a href="/p/1">One</a><span class=price>10</span>
<li class=card><a href="/p/2">Two</a><span class=price>20</span>
<li>plain</ul>
<table><tr><th>Weight<td>2 kg<tr><th>Colour<td>red</table>
<!-- a note -->
</body></HTML>`);
const root = document as unknown as DomNode;
const texts = (x: string) => {
  const v = evaluateXPath(x, root);
  if (!Array.isArray(v)) throw new Error(`${x} gave ${v}`);
  return v.map((n) => stringValue(n).trim());
};

describe('XPath on HTML', () => {
  it('walks the HTML5 tree: implied end tags, any case, every axis', () => {
    expect(texts('//LI')).toEqual(['One10', 'Two20', 'plain']);
    expect(texts('/html/body/h1')).toEqual(['Catalogue']);
    expect(texts('//tr[2]/td')).toEqual(['red']);
    expect(texts("//th[.='Colour']/following-sibling::td")).toEqual(['red']);
    expect(texts('//li[3]/preceding-sibling::li/a')).toEqual(['One', 'Two']);
    expect(texts('//li[3]/preceding-sibling::li[1]/a')).toEqual(['Two']);
    expect(texts('//a[. = "Two"]/ancestor::ul/@id')).toEqual(['list']);
    expect(texts('//span/../a')).toEqual(['One', 'Two']);
    expect(texts('//h1/following::th')).toEqual(['Weight', 'Colour']);
    expect(texts('//td[last()]/preceding::a')).toEqual(['One', 'Two']);
    expect(texts('//comment()')).toEqual(['a note']);
    expect(texts('//li/a/@href | //h1')).toEqual(['Catalogue', '/p/1', '/p/2']);
    expect(texts('descendant::li[@class][position() = last()]/span')).toEqual(['20']);
  });

  it('predicates and functions: positions, attributes, strings, numbers', () => {
    expect(texts("//li[contains(concat(' ', @class, ' '), ' new ')]/a")).toEqual(['One']);
    expect(texts('(//li)[last()]')).toEqual(['plain']);
    expect(texts('//li[span > 15]/a')).toEqual(['Two']);
    expect(texts('//li[not(span)]')).toEqual(['plain']);
    expect(texts("//a[starts-with(@href, '/p/') and substring-after(@href, '/p/') = '2']")).toEqual(['Two']);
    expect(evaluateXPath('count(//li)', root)).toBe(3);
    expect(evaluateXPath('sum(//span)', root)).toBe(30);
    expect(evaluateXPath('normalize-space(//h1)', root)).toBe('Catalogue');
    expect(evaluateXPath('translate(//h1, "aeiou", "")', root)).toBe(' Ctlg ');
    expect(evaluateXPath('string-length(normalize-space(//h1)) * 2 div 3 mod 5', root)).toBe(1);
    expect(evaluateXPath('-(//span)[1] + 1', root)).toBe(-9);
    expect(evaluateXPath('name(//ul/@*)', root)).toBe('id');
    expect(evaluateXPath('//li = "plain" and //li != "plain"', root)).toBe(true);
  });

  it('evaluates from a context node', () => {
    const li = document.querySelectorAll('li')[1] as unknown as DomNode;
    expect(evaluateXPath('string(./a)', li)).toBe('Two');
    expect((evaluateXPath('.//span', li) as DomNode[]).length).toBe(1);
    expect((evaluateXPath('//span', li) as DomNode[]).length).toBe(2);
  });

  it('refuses what it cannot read, saying why', () => {
    expect(xpathProblem('//li[')).toBe('the expression ends too early');
    expect(xpathProblem('//li[@class="a"')).toBe("expected ']' at the end");
    expect(xpathProblem('upper-case(//li)')).toBe('unknown function upper-case()');
    expect(xpathProblem('//li[$n]')).toBe('variables ($name) are not supported');
    expect(xpathProblem('//foo::li')).toBe("unknown axis 'foo'");
    expect(xpathProblem('contains(//li)')).toBe('contains() takes 2–2 arguments');
    expect(xpathProblem('//li/text(1)')).toBe("expected ')' before '1'");
    expect(xpathProblem('//li[1]')).toBeNull();
  });

  it('stops an expression that would visit too much of a large page', () => {
    const big = parseHTML(`<html><body>${'<div>'.repeat(4000)}x</body></html>`).document;
    expect(() => evaluateXPath('//*//*//*', big as unknown as DomNode)).toThrow(
      /visited over 2,000,000 nodes/,
    );
  });
});
