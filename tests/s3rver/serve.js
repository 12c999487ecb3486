// A real S3-compatible server for the tests of the S3 media storage
// (tests/api/test_media_s3.py): s3rver, which keeps objects in a directory.
//
//   node serve.js DIRECTORY ACCESS_KEY SECRET_KEY
//
// Listens on a free loopback port and prints {"port": N} as its first line
// of output. Knows only the key pair given (s3rver's built-in S3RVER pair is
// revoked), so a request signed with another key id is refused
// (InvalidAccessKeyId). s3rver checks the whole signature of SigV2 requests
// only; of SigV4 requests (what boto3 sends) it checks the key id.
// Path-style addressing only (no bucket in the host name).
'use strict';

const S3rver = require('s3rver');
const AWSAccount = require('s3rver/lib/models/account');

const [directory, accessKey, secretKey] = process.argv.slice(2);
if (!directory || !accessKey || !secretKey) {
  console.error('usage: node serve.js DIRECTORY ACCESS_KEY SECRET_KEY');
  process.exit(2);
}
AWSAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
AWSAccount.DUMMY_ACCOUNT.createKeyPair(accessKey, secretKey);

const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  directory,
  silent: true,
  vhostBuckets: false,
  allowMismatchedSignatures: false,
});
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
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => server.close(() => process.exit(0)));
}
