// Ad and tracker blocking for screenshots (`blockAds`). No npm package carries an ad filter list that works
// offline (@ghostery/adblocker's prebuilt lists download at run time, which Pier never does; EasyList itself
// is GPL/CC-BY-SA text), so Pier ships its own short list, written here: the ad-serving and tracking
// networks that fill most ad slots, by host (the host or any subdomain), and the URL paths ad servers
// conventionally use. Decision and limits: docs/webdata-browser.md ("What is blocked").

const AD_HOSTS = [
  '2mdn.net',
  '33across.com',
  'adform.net',
  'adnxs.com',
  'adroll.com',
  'ads.linkedin.com',
  'ads.twitter.com',
  'ads.yahoo.com',
  'adsafeprotected.com',
  'adservice.google.com',
  'adsrvr.org',
  'advertising.com',
  'amazon-adsystem.com',
  'bidswitch.net',
  'casalemedia.com',
  'criteo.com',
  'criteo.net',
  'doubleclick.net',
  'exoclick.com',
  'googleadservices.com',
  'googlesyndication.com',
  'googletagservices.com',
  'indexww.com',
  'media.net',
  'mgid.com',
  'moatads.com',
  'openx.net',
  'outbrain.com',
  'popads.net',
  'propellerads.com',
  'pubmatic.com',
  'quantserve.com',
  'revcontent.com',
  'rubiconproject.com',
  'scorecardresearch.com',
  'serving-sys.com',
  'sharethrough.com',
  'smartadserver.com',
  'taboola.com',
  'teads.tv',
  'yieldmo.com',
  'zedo.com',
];

// Path segments ad servers use; matched on whole segments so '/uploads/' or '/headers/' never match.
const AD_PATH =
  /\/(ads?|adserver|adservice|advert|adverts|advertisement|adframe|adbanner|banner-?ads?|pagead|sponsored-ads)(\/|\.|\?|$)/i;

/** True when the request is an ad or a tracker by the shipped list. */
export function isAdRequest(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const host = u.hostname.toLowerCase();
  for (const h of AD_HOSTS) if (host === h || host.endsWith(`.${h}`)) return true;
  return AD_PATH.test(u.pathname);
}

/** Hidden when ads are blocked, so the empty slot an ad leaves does not show a frame or a label. */
export const AD_SLOT_CSS = `
ins.adsbygoogle, .adsbygoogle, [id^="google_ads_"], [id^="div-gpt-ad"], iframe[src*="doubleclick.net"],
.ad-slot, .ad-banner, .advertisement, [data-ad-slot], [data-ad-unit] { display: none !important; }`;
