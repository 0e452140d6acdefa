/**
 * Accessibility basics checked inside a real page (headless Chromium through playwright-core):
 * structure (WCAG 2.x SC 1.3.1, 2.4.2, 3.1.1), labels (SC 1.3.1, 4.1.2), text contrast
 * (SC 1.4.3), keyboard focus order and visible focus (SC 2.1.1, 2.4.3, 2.4.7), and a page
 * that loads cleanly (no console errors, page errors or failed requests for its own assets).
 *
 * The functions handed to `page.evaluate` run in the browser: they are serialized, so they use
 * nothing from this module's scope.
 */
import type { Page as PlaywrightPage } from 'playwright-core';

/*
 * The little of the DOM that the in-page checks use, declared for this module only: the project
 * compiles without the DOM library (adding it would retype Node's fetch for every file).
 */
interface DomNode {
  nodeType: number;
  textContent: string | null;
}
interface DomElement extends DomNode {
  tagName: string;
  id: string;
  parentElement: DomElement | null;
  childNodes: Iterable<DomNode>;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { width: number; height: number };
  querySelectorAll(selectors: string): Iterable<DomElement>;
  blur?(): void;
  /** Form controls. */
  type?: string;
  value?: string;
  labels?: Iterable<DomElement> | null;
  /** link elements. */
  sheet?: object | null;
}
interface DomStyle {
  display: string;
  visibility: string;
  opacity: string;
  color: string;
  backgroundColor: string;
  backgroundImage: string;
  fontSize: string;
  fontWeight: string;
  outlineStyle: string;
  outlineWidth: string;
  outlineColor: string;
  boxShadow: string;
}
declare const document: {
  documentElement: DomElement;
  body: DomElement;
  activeElement: DomElement | null;
  title: string;
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): Iterable<DomElement>;
  getElementById(id: string): DomElement | null;
};
declare function getComputedStyle(element: DomElement): DomStyle;

const TEXT_NODE = 3;

/** What a page said or failed to load while a test looked at it. */
export interface PageProblems {
  consoleErrors: string[];
  pageErrors: string[];
  failedRequests: string[];
}

/**
 * Records console errors (CSP violations land there too), uncaught page errors, and requests for
 * the server's own resources that failed or answered ≥ 400. Chromium also logs "Failed to load
 * resource" for a document answered 4xx: those are left out, because our error pages and the
 * failed sign-in answer 400/401 on purpose (the tests check those statuses themselves).
 */
export function watchPage(page: PlaywrightPage, ownOrigin: string): { problems(): PageProblems } {
  const consoleErrors: { text: string; url: string }[] = [];
  const documents = new Set<string>();
  const pageErrors: string[] = [];
  const failedRequests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push({ text: message.text(), url: message.location().url });
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('requestfailed', (request) => {
    if (request.url().startsWith(ownOrigin)) failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`);
  });
  page.on('response', (response) => {
    const request = response.request();
    if (request.resourceType() === 'document') documents.add(response.url());
    else if (response.url().startsWith(ownOrigin) && response.status() >= 400) failedRequests.push(`${request.method()} ${response.url()}: ${response.status()}`);
  });
  return {
    problems: () => ({
      consoleErrors: consoleErrors.filter((e) => !(e.text.startsWith('Failed to load resource') && documents.has(e.url))).map((e) => `${e.text} (${e.url})`),
      pageErrors: [...pageErrors],
      failedRequests: [...failedRequests],
    }),
  };
}

export interface PageStructure {
  lang: string;
  title: string;
  h1Count: number;
  mainCount: number;
  /** Visible form controls with no label[for], wrapping label, aria-label or aria-labelledby. */
  unlabelledControls: string[];
  /** Whether every stylesheet link loaded (its sheet is there). */
  stylesheetsLoaded: boolean;
  /** The declared icon: without one, browsers ask for /favicon.ico, a 404 and a console error. */
  icon: string | null;
}

export function pageStructure(page: PlaywrightPage): Promise<PageStructure> {
  return page.evaluate(() => {
    const isVisible = (element: DomElement): boolean => {
      const style = getComputedStyle(element);
      const box = element.getBoundingClientRect();
      return style.display !== 'none' && style.visibility !== 'hidden' && box.width > 0 && box.height > 0;
    };
    const describe = (element: DomElement): string => `<${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''} name="${element.getAttribute('name') ?? ''}">`;
    const hasLabel = (control: DomElement): boolean => {
      const ariaLabel = control.getAttribute('aria-label');
      if (ariaLabel && ariaLabel.trim() !== '') return true;
      const labelledBy = control.getAttribute('aria-labelledby');
      if (labelledBy && labelledBy.split(/\s+/).some((id: string) => (document.getElementById(id)?.textContent ?? '').trim() !== '')) return true;
      return [...(control.labels ?? [])].some((label) => (label.textContent ?? '').trim() !== '');
    };
    const controls = [...document.querySelectorAll('input, select, textarea')].filter((c) => c.type !== 'hidden' && isVisible(c));
    const links = [...document.querySelectorAll('link[rel="stylesheet"]')];
    return {
      lang: document.documentElement.getAttribute('lang') ?? '',
      title: document.title,
      h1Count: [...document.querySelectorAll('h1')].length,
      mainCount: [...document.querySelectorAll('main, [role="main"]')].length,
      unlabelledControls: controls.filter((c) => !hasLabel(c)).map(describe),
      stylesheetsLoaded: links.length > 0 && links.every((link) => link.sheet !== null && link.sheet !== undefined),
      icon: document.querySelector('link[rel~="icon"]')?.getAttribute('href') ?? null,
    };
  });
}

export interface ContrastFinding {
  text: string;
  color: string;
  background: string;
  ratio: number;
  required: number;
}

export interface ContrastReport {
  /** How many elements with visible text were measured (so an empty page cannot pass vacuously). */
  checked: number;
  failures: ContrastFinding[];
}

/**
 * WCAG 2.x contrast (SC 1.4.3) of every element that shows text of its own, and of text inputs
 * holding a value: the computed colour against the effective background, found by walking up the
 * ancestors and compositing translucent backgrounds over the ones below (the canvas is white).
 * At least 4.5:1, or 3:1 for large text (≥ 24px, or bold ≥ 18.66px).
 */
export function textContrast(page: PlaywrightPage): Promise<ContrastReport> {
  return page.evaluate((textNode) => {
    type Rgba = [number, number, number, number];
    const parse = (css: string): Rgba => {
      const numbers = css.match(/[\d.]+/g)?.map(Number) ?? [];
      if (!css.startsWith('rgb') || numbers.length < 3) throw new Error(`Unexpected colour ${css}`);
      return [numbers[0], numbers[1], numbers[2], numbers.length > 3 ? numbers[3] : 1];
    };
    const over = (top: Rgba, bottom: Rgba): Rgba => {
      const a = top[3];
      return [top[0] * a + bottom[0] * (1 - a), top[1] * a + bottom[1] * (1 - a), top[2] * a + bottom[2] * (1 - a), 1];
    };
    const background = (element: DomElement | null): Rgba => {
      const layers: Rgba[] = [];
      for (let node = element; node; node = node.parentElement) {
        const style = getComputedStyle(node);
        if (style.backgroundImage !== 'none') throw new Error(`Background image on ${node.tagName}: contrast cannot be computed`);
        const colour = parse(style.backgroundColor);
        if (colour[3] > 0) layers.push(colour);
        if (colour[3] >= 1) break;
      }
      return layers.reduceRight<Rgba>((below, layer) => over(layer, below), [255, 255, 255, 1]);
    };
    const luminance = ([r, g, b]: Rgba): number => {
      const channel = (v: number) => {
        const s = v / 255;
        return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    const ratioOf = (a: Rgba, b: Rgba): number => {
      const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (light + 0.05) / (dark + 0.05);
    };
    const isVisible = (element: DomElement): boolean => {
      const style = getComputedStyle(element);
      const box = element.getBoundingClientRect();
      return style.display !== 'none' && style.visibility !== 'hidden' && Number(style.opacity) > 0 && box.width > 0 && box.height > 0;
    };
    const ownText = (element: DomElement): string => {
      if (element.tagName === 'INPUT') return element.type === 'text' || element.type === 'password' ? (element.value ?? '') : '';
      return [...element.childNodes].filter((n) => n.nodeType === textNode).map((n) => n.textContent ?? '').join('').trim();
    };
    const failures: { text: string; color: string; background: string; ratio: number; required: number }[] = [];
    let checked = 0;
    for (const element of document.body.querySelectorAll('*')) {
      const text = ownText(element);
      if (text === '' || !isVisible(element)) continue;
      checked += 1;
      const style = getComputedStyle(element);
      const back = background(element);
      const fore = over(parse(style.color), back);
      const size = parseFloat(style.fontSize);
      const bold = Number(style.fontWeight) >= 700;
      const required = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
      const ratio = ratioOf(fore, back);
      if (ratio < required) {
        failures.push({ text: text.slice(0, 60), color: style.color, background: `rgb(${back.slice(0, 3).map(Math.round).join(', ')})`, ratio: Math.round(ratio * 100) / 100, required });
      }
    }
    return { checked, failures };
  }, TEXT_NODE);
}

/** One stop of the Tab order, with what makes its focus visible. */
export interface FocusStop {
  /** `tag#id`, `tag[name=value]` or `tag "text"`: enough to recognise it. */
  element: string;
  isSubmit: boolean;
  outline: string;
  boxShadow: string;
  /** A focus indicator is drawn: an outline of some width and style, or a box-shadow. */
  focusVisible: boolean;
  /** Contrast of the outline colour against the background around the element (SC 1.4.11); null without an outline. */
  outlineContrast: number | null;
}

/**
 * Presses Tab from the start of the page (focus cleared, the navigation starting point moved to the
 * document's top by a click on the empty top-left corner) until focus leaves the page or comes back
 * round, recording each focused element.
 */
export async function tabOrder(page: PlaywrightPage, maxStops = 20): Promise<FocusStop[]> {
  await page.evaluate(() => document.activeElement?.blur?.());
  await page.mouse.click(1, 1);
  const stops: FocusStop[] = [];
  for (let i = 0; i < maxStops; i++) {
    await page.keyboard.press('Tab');
    const stop = await page.evaluate((): FocusStop | null => {
      const active = document.activeElement;
      if (!active || active === document.body || active === document.documentElement) return null;
      const tag = active.tagName.toLowerCase();
      const name = active.getAttribute('name');
      const text = (active.textContent ?? '').trim().replace(/\s+/g, ' ');
      const element = active.id ? `${tag}#${active.id}` : name ? `${tag}[${name}=${active.value}]` : `${tag} "${text}"`;
      const style = getComputedStyle(active);
      const outlineDrawn = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
      const boxShadowDrawn = style.boxShadow !== 'none';
      // The outline sits outside the element (outline-offset), so it is seen against the parent's background.
      const rgb = (css: string) => (css.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
      const luminance = (css: string) => {
        const [r, g, b] = rgb(css).map((v) => {
          const s = v / 255;
          return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      let backdrop = 'rgb(255, 255, 255)';
      for (let node = active.parentElement; node; node = node.parentElement) {
        const colour = getComputedStyle(node).backgroundColor;
        if (colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') {
          backdrop = colour;
          break;
        }
      }
      const [light, dark] = [luminance(style.outlineColor), luminance(backdrop)].sort((x, y) => y - x);
      return {
        element,
        isSubmit: (tag === 'button' || tag === 'input') && active.type === 'submit',
        outline: `${style.outlineWidth} ${style.outlineStyle} ${style.outlineColor}`,
        boxShadow: style.boxShadow,
        focusVisible: outlineDrawn || boxShadowDrawn,
        outlineContrast: outlineDrawn ? Math.round(((light + 0.05) / (dark + 0.05)) * 100) / 100 : null,
      };
    });
    if (stop === null || (stops.length > 0 && stop.element === stops[0].element)) break;
    stops.push(stop);
  }
  return stops;
}

/** The visible submit buttons of the page, named like FocusStop.element. */
export function submitButtons(page: PlaywrightPage): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('button[type="submit"], input[type="submit"], button:not([type])')]
      .filter((b) => b.getBoundingClientRect().width > 0)
      .map((b) => {
        const tag = b.tagName.toLowerCase();
        const name = b.getAttribute('name');
        const text = (b.textContent ?? '').trim().replace(/\s+/g, ' ');
        return b.id ? `${tag}#${b.id}` : name ? `${tag}[${name}=${b.value}]` : `${tag} "${text}"`;
      }),
  );
}

/** One rule axe-core found broken on the page, with the elements that break it. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  targets: string[];
}

/**
 * axe-core (Deque's rules engine, WCAG 2.x A and AA) run inside the page. It is evaluated through
 * the DevTools protocol, which the page's Content-Security-Policy does not govern, so the page's
 * own policy stays as strict as it is in production. Returns the violations; none is the goal.
 */
export async function axeViolations(page: PlaywrightPage): Promise<AxeViolation[]> {
  const { createRequire } = await import('node:module');
  const { readFileSync } = await import('node:fs');
  const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, targets: violation.nodes.flatMap((node) => node.target) }));
  });
}
