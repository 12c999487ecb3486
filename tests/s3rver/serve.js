// A real S3-compatible server for the tests of the S3 media storage
// (tests/api/test_media_s3.py): s3rver, which keeps objects in a directory.
//
//   node serve.js DIRECTORY ACCESS_KEY SECRET_KEY
//
// Listens on a free loopback port and prints {"port": N} as its first line
// of output. Knows only the key pair given (s3rver's built-in S3RVER pair is
// revoked), so a request signed with another key id is refused
// (InvalidAccessKeyId). s3rver itself checks the whole signature of SigV2
// requests only (of SigV4 requests, what boto3 sends, just the key id), so
// this wrapper checks SigV4 Authorization headers itself (checkV4 below): a
// wrong secret is refused too (SignatureDoesNotMatch), as S3 refuses it.
// Requests without credentials (a browser fetching a file) pass, as s3rver
// lets them. Path-style addressing only (no bucket in the host name).
'use strict';

const { createHash, createHmac } = require('crypto');
const S3rver = require('s3rver');
const AWSAccount = require('s3rver/lib/models/account');

const [directory, accessKey, secretKey] = process.argv.slice(2);
if (!directory || !accessKey || !secretKey) {
  console.error('usage: node serve.js DIRECTORY ACCESS_KEY SECRET_KEY');
  process.exit(2);
}
AWSAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
AWSAccount.DUMMY_ACCOUNT.createKeyPair(accessKey, secretKey);

const hmac = (key, data) => createHmac('sha256', key).update(data).digest();
const sha256 = data => createHash('sha256').update(data).digest('hex');
const rfc3986 = value =>
  encodeURIComponent(value).replace(/[!'()*]/g, c => '%' + c.charCodeAt(0).toString(16).toUpperCase());

function s3Error(ctx, status, code, message) {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code>` +
    `<Message>${message}</Message></Error>`;
}

// The SigV4 check of an Authorization header (AWS's "Signature Version 4
// signing process" for S3: the path as sent, the query sorted, the signed
// headers, the payload hash the client declared).
async function checkV4(ctx, next) {
  const auth = ctx.get('Authorization');
  if (!auth.startsWith('AWS4-HMAC-SHA256 ')) return next();
  const parts = Object.fromEntries(auth.slice(17).split(',').map(p => {
    const i = p.indexOf('=');
    return [p.slice(0, i).trim(), p.slice(i + 1).trim()];
  }));
  const [keyId, date, region, service] = (parts.Credential || '').split('/');
  if (keyId !== accessKey) return next(); // s3rver answers InvalidAccessKeyId
  const signed = (parts.SignedHeaders || '').split(';');
  const [path, query = ''] = ctx.req.url.split(/\?(.*)/s);
  const canonicalQuery = query === '' ? '' : query.split('&').map(pair => {
    const i = pair.indexOf('=');
    const [k, v] = i < 0 ? [pair, ''] : [pair.slice(0, i), pair.slice(i + 1)];
    return [rfc3986(decodeURIComponent(k)), rfc3986(decodeURIComponent(v.replace(/\+/g, ' ')))];
  }).sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`).join('&');
  const headers = signed.map(h => `${h}:${String(ctx.req.headers[h] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [ctx.method, path, canonicalQuery, headers, signed.join(';'),
    ctx.get('x-amz-content-sha256') || 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', ctx.get('x-amz-date'), scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac('AWS4' + secretKey, date), region), service), 'aws4_request');
  if (hmac(key, toSign).toString('hex') !== parts.Signature) {
    return s3Error(ctx, 403, 'SignatureDoesNotMatch', 'The request signature we calculated ' +
      'does not match the signature you provided. Check your key and signing method.');
  }
  return next();
}

const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  directory,
  silent: true,
  vhostBuckets: false,
  allowMismatchedSignatures: false,
});
server.middleware.unshift(checkV4); // (before s3rver's own; composed when it listens)
server.run().then(
  address => console.log(JSON.stringify({ port: address.port })),
  err => {
    console.error(`s3rver did not start: ${err.stack || err}`);
    process.exit(1);
  },
);
// The test process ends us (SIGTERM); if it dies first, the kernel does
// (PR_SET_PDEATHSIG, set by the test before exec), and stdin closing says so too.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
// (at once: a test server need not wait for idle keep-alive connections)
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => process.exit(0));
}
