/**
 * Fuzzing the shepherd's judgement of links (shepherd/scope.ts), which every
 * link of every fetched page goes through: any text, resolved against any
 * page, gets a verdict and never an exception; an accepted URL is already
 * normalised (normalise is idempotent) and one hop deeper than its page.
 */

import assert from 'node:assert/strict';
import fc from 'fast-check';
import { shepherdConfig } from '../../shepherd/config.js';
import { Scope } from '../../shepherd/scope.js';
import { bytesNear, check, fuzzFile } from './harness.js';

const LINKS = [
  'http://example.org/a/b/../c;jsessionid=123?sid=9&utm_source=x&b=2#top',
  '../../x/./y?a=1&&b=2&',
  '//other.example.net:8080/p',
  'https://sub.example.org/(S(abc))/home',
  'javascript:void(0)',
  '/a/a/a/a/a/',
  '?' + Array.from({ length: 20 }, (_, i) => `p${i}=1`).join('&'),
].map((link) => Buffer.from(link));

fuzzFile(import.meta.url, {
  'scope: any link from any page gets a verdict; accepted URLs are normal and one hop deeper': {
    runs: 2000,
    property: (params) => {
      const scopes = (['host', 'domain', 'any'] as const).map(
        (scope) => new Scope(shepherdConfig.parse({ scope, allow: ['*.example.net'], deny: ['bad.example.org'], deny_patterns: ['/private/'] }), ['example.org']),
      );
      return check(
        fc.tuple(fc.constantFrom(...scopes), fc.oneof(fc.string({ maxLength: 100 }), bytesNear(LINKS, 4).map((b) => b.toString('latin1'))), fc.nat({ max: 20 }), fc.boolean()),
        ([scope, link, depth, seed]) => {
          const verdict = scope.judge(link, seed ? { seed: true } : { url: 'http://example.org/dir/page', depth });
          if (!verdict.ok) return;
          assert.equal(scope.normalise(verdict.url), verdict.url);
          assert.equal(verdict.depth, seed ? 0 : depth + 1);
        },
        params,
      );
    },
  },
});
