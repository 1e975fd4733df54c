/**
 * A self-signed certificate made with openssl for this run, for a TLS server in a test: a client trusts
 * it only when it is given the certificate as its CA.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A key and certificate for `name` (a host name or an IP address, in the CN and the subjectAltName). */
export function selfSignedCertificate(name: string): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'ak-test-cert-'));
  try {
    const altName = `${isIP(name) ? 'IP' : 'DNS'}:${name}`;
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', `/CN=${name}`, '-addext', `subjectAltName=${altName}`], { cwd: dir, encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** For a server on 127.0.0.1, such as a scripted broker on mqtts://. */
export const loopbackCertificate = (): { key: Buffer; cert: Buffer } => selfSignedCertificate('127.0.0.1');
