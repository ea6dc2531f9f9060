"""One-replica account, container and object rings for a one-node Swift on loopback.

Usage: python3 rings.py <swift_dir> <account_port> <container_port> <object_port>
(Debian's python3, which has the swift package; packages/testing/src/swift-s3.ts runs it.)
"""
import sys

from swift.common.ring import RingBuilder

swift_dir = sys.argv[1]
ports = dict(zip(['account', 'container', 'object'], map(int, sys.argv[2:5])))
for name, port in ports.items():
    builder = RingBuilder(6, 1, 1)  # 2^6 partitions, 1 replica, 1 hour between moves
    builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port,
                     'device': 'd1', 'weight': 100, 'meta': ''})
    builder.rebalance()
    builder.get_ring().save(f'{swift_dir}/{name}.ring.gz')
