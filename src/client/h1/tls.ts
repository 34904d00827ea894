import { readFileSync } from 'node:fs'
import { isIP, type Socket } from 'node:net'
import * as tls from 'node:tls'

/**
 * TLS for the streaming client: node:tls with SNI and one secure context for the whole process,
 * trusting Node's bundled roots plus the system's trust store (what curl and Python trust on this
 * machine, so a private CA the administrator installed works without NODE_EXTRA_CA_CERTS) plus
 * NODE_EXTRA_CA_CERTS. One context, built on first use: a context per connection would parse a
 * few hundred certificates for each of a thousand streams.
 */

/** Where Debian, Ubuntu, Alpine and Arch keep the system's bundle; Fedora/RHEL keep it at the second. */
const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt']

let context: tls.SecureContext | null = null

/** The certificates to trust: Node's roots, the system's store, NODE_EXTRA_CA_CERTS. */
export function trustedCertificates(env: NodeJS.ProcessEnv = process.env): string[] {
  const certificates = [...tls.rootCertificates, ...systemCertificates()]
  const extra = env.NODE_EXTRA_CA_CERTS
  // Node adds these to its own default store, but a context given `ca` starts from `ca` alone.
  if (extra !== undefined && extra !== '') {
    try {
      certificates.push(readFileSync(extra, 'utf8'))
    } catch {
      // Node itself warns at start-up when the file cannot be read; nothing more to say here.
    }
  }
  return certificates
}

/** tls.getCACertificates('system') where this Node has it (22.15+, 23.5+), else the distro's bundle. */
function systemCertificates(): string[] {
  const get = (tls as { getCACertificates?: (type: string) => string[] }).getCACertificates
  if (typeof get === 'function') {
    try {
      return get('system')
    } catch {
      // Fall back to the bundle file.
    }
  }
  for (const path of SYSTEM_BUNDLES) {
    try {
      return [readFileSync(path, 'utf8')]
    } catch {
      // Not this distribution's layout.
    }
  }
  return []
}

function secureContext(): tls.SecureContext {
  context ??= tls.createSecureContext({ ca: trustedCertificates() })
  return context
}

/**
 * Opens a TLS connection to host:port, naming the host for SNI (an IP address is not named); over
 * `socket` when given (a proxy's tunnel to host:port).
 */
export function connectTls(host: string, port: number, socket?: Socket): tls.TLSSocket {
  return tls.connect({
    host,
    port,
    ...(socket === undefined ? {} : { socket }),
    servername: isIP(host) === 0 ? host : undefined,
    secureContext: secureContext(),
    ALPNProtocols: ['http/1.1'],
  })
}
