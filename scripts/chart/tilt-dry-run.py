"""Runs the Tiltfile with recording stand-ins for Tilt's built-ins and prints what it declares, as JSON.

Tilt cannot run on the development machines and no Starlark interpreter is packaged for npm; the Tiltfile uses
only the part of Starlark that is also Python, so Python runs it. scripts/chart/check-tilt.ts compares the output
with deploy/deployables.json and the rendered chart.

    python3 scripts/chart/tilt-dry-run.py [Tiltfile] [tilt_config.json services...]
"""
import json
import os
import sys

declared = {'images': [], 'resources': [], 'local_resources': [], 'k8s_yaml': [], 'helm': []}


class Config:
    def __init__(self, services):
        self.services = services

    def define_string_list(self, name, args=False, usage=''):
        pass

    def parse(self):
        return {'services': self.services} if self.services else {}


def read_json(path):
    with open(path) as f:
        return json.load(f)


def local_resource(name, cmd='', deps=None, labels=None, resource_deps=None, **kw):
    declared['local_resources'].append({'name': name, 'cmd': cmd, 'resource_deps': resource_deps or []})


def k8s_yaml(src):
    declared['k8s_yaml'].append(src)


def helm(chart, name='', namespace='', values=None, set=None, **kw):
    declared['helm'].append({'chart': chart, 'name': name, 'namespace': namespace, 'values': values or [], 'set': set or []})
    return {'helm': chart}


def k8s_resource(workload='', labels=None, resource_deps=None, port_forwards=None, **kw):
    declared['resources'].append({'name': workload, 'resource_deps': resource_deps or [], 'port_forwards': port_forwards or []})


def docker_build(ref, context='.', dockerfile='Dockerfile', target='', build_args=None, live_update=None, **kw):
    declared['images'].append({
        'ref': ref, 'context': context, 'dockerfile': dockerfile, 'target': target, 'build_args': build_args or {},
        'live_update': live_update or [], 'entrypoint': kw.get('entrypoint'), 'options': sorted(kw.keys()),
    })


def sync(local, remote):
    return {'sync': [local, remote]}


def run(cmd, trigger=None):
    return {'run': cmd}


def fall_back_on(files):
    return {'fall_back_on': files}


def fail(msg):
    raise SystemExit('Tiltfile failed: ' + msg)


def load(module, *symbols):
    raise SystemExit('Tiltfile loads %s: extensions are not stubbed here (the restart_process one writes to /)' % module)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else 'Tiltfile'
    scope = {
        'config': Config(sys.argv[2:]), 'read_json': read_json, 'os': os, 'local_resource': local_resource,
        'k8s_yaml': k8s_yaml, 'helm': helm, 'k8s_resource': k8s_resource, 'docker_build': docker_build,
        'sync': sync, 'run': run, 'fall_back_on': fall_back_on, 'fail': fail, 'load': load,
    }
    with open(path) as f:
        exec(compile(f.read(), path, 'exec'), scope)
    json.dump(declared, sys.stdout, indent=1)


main()
