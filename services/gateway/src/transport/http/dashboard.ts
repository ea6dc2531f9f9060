import path from 'node:path';
import express, { type Router } from 'express';

const PUBLIC_DIR = path.join(__dirname, '..', '..', '..', 'public');
// uPlot ships its ES module and stylesheet in dist/ with no exports map, so they resolve as plain files.
const VENDOR: Record<string, string> = {
  'uPlot.esm.js': require.resolve('uplot/dist/uPlot.esm.js'),
  'uPlot.min.css': require.resolve('uplot/dist/uPlot.min.css'),
};

/**
 * Strict: scripts and styles only from the gateway's own files (no inline code), requests only to the
 * gateway itself (the dashboard sends the embedded blob store's upload URLs to its own origin).
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The dashboard: one HTML shell for every `/dashboard/...` page (the browser routes them), its modules
 * under `/dashboard/assets`, the vendored chart library and the icon. Every response carries the CSP.
 */
export function dashboardRouter(): Router {
  const router = express.Router();
  const secure: express.RequestHandler = (_req, res, next) => {
    res.set({
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
      'X-Frame-Options': 'DENY',
    });
    next();
  };
  router.get('/dashboard/assets/vendor/:file', secure, (req, res, next) => {
    const file = VENDOR[String(req.params.file)];
    if (!file) return next();
    // pnpm keeps packages under node_modules/.pnpm, a dot-directory that send() refuses by default.
    res.sendFile(file, { maxAge: '1h', dotfiles: 'allow' });
  });
  router.use('/dashboard/assets', secure, express.static(PUBLIC_DIR, { index: false, maxAge: '5m' }));
  // The dashboard's pages link the icon; a browser asks for /favicon.ico on any page that does not (a JSON
  // answer opened in a tab), so that answers with the same SVG.
  router.get('/favicon.ico', secure, (_req, res) => {
    res.sendFile(path.join(PUBLIC_DIR, 'favicon.svg'), { maxAge: '1d' });
  });
  router.get(['/', '/dashboard', /^\/dashboard\/(?!assets\/).+/], secure, (_req, res) => {
    res.set('Cache-Control', 'no-cache');
    res.sendFile(path.join(PUBLIC_DIR, 'index.html'));
  });
  return router;
}
