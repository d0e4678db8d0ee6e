// browser_check.mjs - load a page in the system Chromium (headless, driven
// by playwright-core; no browser is ever downloaded) and report what a
// person would see, as JSON on stdout, for views_test.py to judge:
// console errors, uncaught page errors, failed requests, the visible text,
// a screenshot's colour statistics, and mode-specific facts.
//
//   node browser_check.mjs svg FILE.svg
//   node browser_check.mjs html FILE.html
//   node browser_check.mjs speedscope FILE.speedscope.json
//
// Exit 0 with the JSON when the browser ran; 77 when Chromium or
// playwright-core is missing (the caller skips); 1 on a harness failure.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const chromium_path = process.env.SCOPE_PROFILER_CHROMIUM || '/usr/bin/chromium';
let playwright;
try {
  playwright = await import('playwright-core');
} catch (e) {
  console.log(`skip: playwright-core is not installed in ${here}/node_modules (npm ci --prefix tests/views)`);
  process.exit(77);
}
if (!fs.existsSync(chromium_path)) {
  console.log(`skip: no Chromium at ${chromium_path}`);
  process.exit(77);
}

const [mode, file] = process.argv.slice(2);
const profileDir = fs.mkdtempSync('/tmp/scope-views-chromium-');
// A fresh profile directory every run (playwright passes it as
// --user-data-dir); the flags are what Chromium needs as root in a
// container with no GPU and no business on the network.
const browser = await playwright.chromium.launchPersistentContext(profileDir, {
  executablePath: chromium_path,
  headless: true,
  viewport: { width: 1400, height: 1000 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--enable-unsafe-swiftshader', '--use-angle=swiftshader'],
});
const result = { console_errors: [], page_errors: [], failed_requests: [], external_requests: [] };
let server = null;
try {
  const page = browser.pages()[0] || await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') result.console_errors.push(m.text()); });
  page.on('pageerror', (e) => result.page_errors.push(String(e)));
  page.on('requestfailed', (r) => result.failed_requests.push(r.url()));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('file:') && !u.startsWith('data:') && !u.startsWith('blob:') &&
        !u.startsWith('http://127.0.0.1')) result.external_requests.push(u);
  });

  if (mode === 'speedscope') {
    // The viewer fetches the profile named in its URL hash, so serve the
    // viewer and the profile from one local origin.
    const dist = path.join(here, 'node_modules/speedscope/dist/release');
    server = http.createServer((req, res) => {
      const url = decodeURIComponent(req.url.split('?')[0].split('#')[0]);
      const target = url === '/profile.json' ? path.resolve(file) : path.join(dist, path.normalize(url));
      fs.readFile(target, (err, body) => {
        if (err) { res.writeHead(404); res.end(); return; }
        const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
                        '.json': 'application/json', '.wasm': 'application/wasm' };
        res.writeHead(200, { 'Content-Type': types[path.extname(target)] || 'application/octet-stream' });
        res.end(body);
      });
    });
    await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
    const port = server.address().port;
    await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent(`http://127.0.0.1:${port}/profile.json`)}`);
    await page.waitForTimeout(3000);
  } else {
    await page.goto(pathToFileURL(path.resolve(file)).href);
    await page.waitForTimeout(800);
  }

  result.title = await page.title();
  result.text = await page.evaluate(() =>
    document.body ? document.body.innerText : (document.documentElement.textContent || ''));
  const shot = await page.screenshot({ fullPage: false });
  // Colour statistics of the screenshot, decoded in the page itself (no
  // image library needed): distinct colours and the share of the most
  // common one. A blank page has one colour.
  const stats = await page.evaluate(async (b64) => {
    // OffscreenCanvas: the page may be an SVG document (no HTML canvas).
    const img = await createImageBitmap(await (await fetch('data:image/png;base64,' + b64)).blob());
    const c = new OffscreenCanvas(img.width, img.height);
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    const counts = new Map();
    for (let i = 0; i < d.length; i += 4 * 7) {
      const k = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
      counts.set(k, (counts.get(k) || 0) + 1);
    }
    let top = 0, total = 0;
    for (const v of counts.values()) { total += v; top = Math.max(top, v); }
    return { distinct: counts.size, top_share: top / total, width: c.width, height: c.height };
  }, shot.toString('base64'));
  result.screenshot = stats;
  if (process.env.SCOPE_VIEWS_SCREENSHOT) fs.writeFileSync(process.env.SCOPE_VIEWS_SCREENSHOT, shot);

  if (mode === 'svg' || mode === 'html') {
    // Every flame-graph frame: its name, drawn width and depth.
    const frames = async () => page.evaluate(() =>
      Array.from(document.querySelectorAll('g.fr')).map((g) => ({
        name: g.getAttribute('data-n'),
        depth: +g.getAttribute('data-d'),
        width: g.style.display === 'none' ? 0 : g.querySelector('rect').getBoundingClientRect().width,
        title: g.querySelector('title').textContent,
      })));
    result.frames = await frames();
    // Click the deepest-but-one widest non-root frame: it must fill the width.
    const target = result.frames.map((f, i) => [f, i]).filter(([f]) => f.depth === 1)
      .sort((a, b) => b[0].width - a[0].width)[0];
    if (target) {
      await page.evaluate((i) => {
        document.querySelectorAll('g.fr')[i].dispatchEvent(new MouseEvent('click', { bubbles: true }));
      }, target[1]);
      result.zoomed = { index: target[1], frames: await frames() };
      await page.evaluate(() => {
        document.querySelectorAll('g.fr')[0].dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
      });
      result.details = await page.evaluate(() => {
        const t = document.querySelector('text.det');
        return t ? t.textContent : null;
      });
    }
  }
  if (mode === 'html') {
    result.tables = await page.evaluate(() =>
      Array.from(document.querySelectorAll('#summary tbody tr')).map((r) => r.cells[0].textContent));
    // Sort by calls: the table must reorder.
    result.sorted_by_calls = await page.evaluate(() => {
      const th = Array.from(document.querySelectorAll('#summary th')).find((h) => h.textContent === 'calls');
      if (!th) return null;
      th.click();
      const col = Array.from(th.parentNode.children).indexOf(th);
      return Array.from(document.querySelectorAll('#summary tbody tr')).map((r) => +r.cells[col].getAttribute('data-v'));
    });
    result.timeline = await page.evaluate(() => {
      const c = document.getElementById('tl');
      if (!c) return null;
      const g = c.getContext('2d');
      const d = g.getImageData(0, 0, c.width, Math.min(c.height, 400)).data;
      const set = new Set();
      for (let i = 0; i < d.length; i += 4 * 11) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return { width: c.width, height: c.height, colours: set.size };
    });
  }
} finally {
  await browser.close();
  if (server) server.close();
  fs.rmSync(profileDir, { recursive: true, force: true });
}
console.log(JSON.stringify(result));
