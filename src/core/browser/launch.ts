import type { Browser } from 'playwright-core';

// Starting Debian's Chromium (never a downloaded build) and ending it for good. Playwright spawns the browser
// detached, so its PID leads a process group that holds every renderer, GPU and utility process it forks:
// killing the group is the last resort that leaves nothing behind.

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  // Chromium's own network is a dead end: every request is fulfilled by the guard (guard.ts), so anything that
  // would bypass the router (a preconnect, a redirect Chromium follows itself, a worker's fetch) meets a proxy
  // that refuses. `<-loopback>` removes the implicit bypass of localhost.
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  // WebRTC's UDP (STUN/TURN, ICE candidates) goes nowhere near a proxy: only proxied transports are allowed.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

export type LaunchedBrowser = { browser: Browser; pid: number };

export async function launchChromium(executablePath: string): Promise<LaunchedBrowser> {
  // Playwright is loaded with the first browser, not with every process that might start one (`pier serve`
  // without web data, the CLI, each test file).
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath,
    args: CHROMIUM_ARGS,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    timeout: 30_000,
  });
  try {
    const cdp = await browser.newBrowserCDPSession();
    const info = (await cdp.send('SystemInfo.getProcessInfo')) as {
      processInfo: { type: string; id: number }[];
    };
    await cdp.detach().catch(() => undefined);
    const pid = info.processInfo.find((p) => p.type === 'browser')?.id;
    if (!pid) throw new Error('Chromium did not report its process id');
    return { browser, pid };
  } catch (err) {
    await browser.close().catch(() => undefined);
    throw err;
  }
}

/** SIGKILL to the whole process group of a browser; silent when it is already gone. */
export function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // ESRCH: nothing left to kill.
    }
  }
}
