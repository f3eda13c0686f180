#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""cdp-dashboard.py - drive headless Chromium over the DevTools protocol.

Loads the dashboard at URL, collects console errors and uncaught
exceptions, samples the page state twice (to see live updates), clicks a
finding, and saves laptop and phone screenshots.  Prints one JSON object.
A minimal WebSocket client is included (stdlib only).

usage: cdp-dashboard.py URL OUT_PREFIX
"""
import base64, json, os, socket, struct, subprocess, sys, tempfile, time, urllib.request


class WS:
    def __init__(self, url):
        assert url.startswith('ws://')
        hostport, path = url[5:].split('/', 1)
        host, port = hostport.split(':')
        self.s = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f'GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n'
                        f'Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n'
                        'Sec-WebSocket-Version: 13\r\n\r\n').encode())
        buf = b''
        while b'\r\n\r\n' not in buf:
            buf += self.s.recv(4096)
        head, self.rest = buf.split(b'\r\n\r\n', 1)
        if b' 101 ' not in head.split(b'\r\n')[0]:
            raise RuntimeError('websocket upgrade failed: ' + head.decode(errors='replace'))

    def _read(self, n):
        while len(self.rest) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise EOFError
            self.rest += chunk
        out, self.rest = self.rest[:n], self.rest[n:]
        return out

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        hdr = bytes([0x81])
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack('>H', n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack('>Q', n)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self):
        msg = b''
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack('>H', self._read(2))[0]
            elif n == 127:
                n = struct.unpack('>Q', self._read(8))[0]
            payload = self._read(n)
            op = b0 & 0x0f
            if op == 0x8:
                raise EOFError
            if op in (0x1, 0x2, 0x0):
                msg += payload
                if b0 & 0x80:
                    return msg.decode()


class CDP:
    def __init__(self, ws):
        self.ws, self.n, self.events = ws, 0, []

    def call(self, method, **params):
        self.n += 1
        my = self.n
        self.ws.send(json.dumps({'id': my, 'method': method, 'params': params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get('id') == my:
                if 'error' in m:
                    raise RuntimeError(f'{method}: {m["error"]}')
                return m.get('result', {})
            if 'method' in m:
                self.events.append(m)

    def eval(self, expr):
        r = self.call('Runtime.evaluate', expression=expr, returnByValue=True, awaitPromise=True)
        return r.get('result', {}).get('value')


STATE = '''(() => {
  const q = (s) => document.querySelector(s);
  const c = q('#chart-cpu'), u = q('#updates');
  return { stage: document.body.dataset.stage || '',
    cpus: +c.dataset.cpus, series: +c.dataset.series, points: +c.dataset.points,
    canvases: c.querySelectorAll('canvas').length,
    legend: document.querySelectorAll('#cpu-series li').length,
    job_series: +q('#chart-jobs').dataset.series,
    tasks: document.querySelectorAll('#tasks tbody tr').length,
    findings: document.querySelectorAll('#findings tbody tr').length,
    updates: +u.dataset.updates, seq: +u.dataset.seq,
    zoom: c.dataset.zoom || '', live: q('#live').textContent,
    errors_shown: !q('#errors').hidden };
})()'''


def main():
    url, out = sys.argv[1], sys.argv[2]
    udd = tempfile.mkdtemp(prefix='imb-chromium-')
    chrome = subprocess.Popen(
        ['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
         '--no-first-run', '--disable-background-networking', '--disable-component-update',
         '--disable-sync', '--user-data-dir=' + udd, '--remote-debugging-port=0',
         '--window-size=1280,1000', 'about:blank'],
        stdout=subprocess.DEVNULL, stderr=open(out + '-chromium.log', 'w'))
    res = {'errors': []}
    try:
        portfile = os.path.join(udd, 'DevToolsActivePort')
        for _ in range(300):
            if os.path.exists(portfile) and open(portfile).read().strip():
                break
            time.sleep(0.1)
        port = open(portfile).read().split()[0]
        targets = json.load(urllib.request.urlopen(f'http://127.0.0.1:{port}/json/list'))
        page = next(t for t in targets if t['type'] == 'page')
        cdp = CDP(WS(page['webSocketDebuggerUrl']))
        cdp.call('Runtime.enable')
        cdp.call('Log.enable')
        cdp.call('Page.enable')
        cdp.call('Page.navigate', url=url)
        t0 = time.time()
        s1 = None
        while time.time() - t0 < 15:
            s1 = cdp.eval(STATE)
            if s1 and s1['stage'] == 'ready' and (s1['updates'] >= 1 or 'offline' in s1['live']):
                break
            time.sleep(0.2)
        res['first'] = s1
        time.sleep(1.2)
        res['second'] = cdp.eval(STATE)
        res['clicked'] = cdp.eval('''(() => { const r = document.querySelector('#findings tbody tr');
            if (!r) return false; r.click(); return true; })()''')
        time.sleep(0.3)
        res['after_click'] = cdp.eval(STATE)
        shot = cdp.call('Page.captureScreenshot', format='png')
        open(out + '-laptop.png', 'wb').write(base64.b64decode(shot['data']))
        cdp.call('Emulation.setDeviceMetricsOverride', width=390, height=844,
                 deviceScaleFactor=2, mobile=True)
        time.sleep(0.8)
        res['phone_overflow'] = cdp.eval('document.documentElement.scrollWidth > window.innerWidth + 1')
        shot = cdp.call('Page.captureScreenshot', format='png', captureBeyondViewport=False)
        open(out + '-phone.png', 'wb').write(base64.b64decode(shot['data']))
        cdp.call('Runtime.evaluate', expression='1')  # flush queued events
        for ev in cdp.events:
            m, p = ev['method'], ev.get('params', {})
            if m == 'Runtime.exceptionThrown':
                d = p['exceptionDetails']
                res['errors'].append('uncaught: ' + d.get('exception', {}).get('description', d.get('text', '')))
            elif m == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert'):
                res['errors'].append('console.error: ' + ' '.join(str(a.get('value', a.get('description', ''))) for a in p.get('args', [])))
            elif m == 'Log.entryAdded' and p['entry'].get('level') == 'error':
                res['errors'].append('log: ' + p['entry'].get('text', '') + ' ' + p['entry'].get('url', ''))
    except Exception as e:  # reported, the test fails on it
        res['errors'].append('driver: %r' % (e,))
    finally:
        chrome.terminate()
        try:
            chrome.wait(10)
        except subprocess.TimeoutExpired:
            chrome.kill()
        subprocess.run(['rm', '-rf', udd])
    print(json.dumps(res))


main()
