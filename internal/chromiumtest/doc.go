// Package chromiumtest is test support for pages checked in a real
// browser: it runs headless Chromium (Debian's chromium package, as root
// with --no-sandbox) with a fresh profile and a deadline, and reads the DOM
// it dumps. Tests of the benchmark report (internal/bench/report), the web
// console (internal/console) and the e2e console test use it.
//
// Require skips a test where Chromium is not installed, except on CI
// (CI=true), where its absence fails the test. Run kills the browser's
// whole process group if it overruns Deadline. Only tests import this
// package.
package chromiumtest
