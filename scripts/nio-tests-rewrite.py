#!/usr/bin/env python3
"""Copies SwiftNIO's generic event-loop tests and points them at MainLoop.

Each rewrite changes only how a loop (or a group of loops) is made, or how
a test's own test loop is driven; never what a test asserts. Every rewrite
must apply at least once, so an upstream change that moves the code fails
here loudly instead of silently testing NIO's loops again.

Usage: nio-tests-rewrite.py NIOPosixTests-dir output-dir
"""
import pathlib
import shutil
import sys

# file -> [(old, new, why)]
REWRITES = {
    # Swift Testing suite: every EmbeddedEventLoop becomes a deterministic
    # MainRunLoop's view on the test thread, every MultiThreadedEventLoopGroup
    # a group of real MainRunLoops on their own threads.
    "EventLoopFutureTest.swift": [
        ("import NIOPosix\n", "import NIOPosix\nimport MainLoopNIOTestSupport\n", "the loop factories"),
        ("EmbeddedEventLoop()", "makeDeterministicEventLoop()", "a deterministic loop on the test thread"),
        ("MultiThreadedEventLoopGroup(numberOfThreads:", "MainLoopThreadGroup(numberOfThreads:", "real loops on threads"),
    ],
    # The XCTest suite against a requirements protocol: the isolated
    # (synchronous) variant runs on a deterministic loop, its time moved by
    # `advance(by:)`. The MultiThreadedEventLoopGroup and async-testing
    # variants stay NIO's; MainLoop's real-clock variant subclasses the
    # base suite in MainLoopScheduledCallbackTests.swift beside this copy.
    "NIOScheduledCallbackTests.swift": [
        ("import NIOPosix\n", "import NIOPosix\nimport MainLoopNIOTestSupport\n", "the loop factories"),
        ("final class IsolatedEventLoopScheduledCallbackTests: XCTestCase {\n    struct Requirements: ScheduledCallbackTestRequirements {\n        let _loop = EmbeddedEventLoop()",
         "final class IsolatedEventLoopScheduledCallbackTests: XCTestCase {\n    struct Requirements: ScheduledCallbackTestRequirements {\n        let _loop = makeDeterministicEventLoop()",
         "the isolated variant on a deterministic loop"),
        ("            self._loop.advanceTime(by: amount)\n",
         "            try! self._loop.loop.advance(by: .nanoseconds(amount.nanoseconds))\n",
         "the manual clock moved by the loop's own advance"),
    ],
    # NIOLoopBound and NIOLoopBoundBox against MainLoop's loops.
    # The isolated views (`assumeIsolated`, non-Sendable values): the
    # SelectableEventLoop variants run on real MainRunLoops, the embedded
    # ones on deterministic MainRunLoops, which the suite's own
    # `RunnableEventLoop` protocol drives (the conformance is appended; it
    # runs the loop's posted work, as `EmbeddedEventLoop.run()` does).
    "EventLoopFutureIsolatedTests.swift": [
        ("import NIOPosix\n", "import NIOPosix\nimport MainLoopNIOTestSupport\nimport MainLoopNIO\n", "the loop factories"),
        ("MultiThreadedEventLoopGroup.singleton.next()", "MainLoopThreadGroup.singleton.next()", "real loops on threads"),
        ("let loop = EmbeddedEventLoop()", "let loop = makeDeterministicEventLoop()", "a deterministic loop on the test thread"),
        ("private protocol RunnableEventLoop: EventLoop {",
         """extension MainLoopEventLoop: RunnableEventLoop {
    fileprivate func runForTests() {
        // A real-clock loop runs on its own thread; a deterministic one is
        // driven by its thread, the test's.
        guard loop.isDeterministic else { return }
        try! loop.runUntilIdle()
    }

    fileprivate func advanceTimeForTests(by amount: TimeAmount) {
        guard loop.isDeterministic else { return }
        try! loop.advance(by: .nanoseconds(amount.nanoseconds))
    }
}

private protocol RunnableEventLoop: EventLoop {""", "MainLoop's loops driven like the suite's own test loops"),
    ],
    # Actors whose executor is `loop.executor` (NIO's default executor over
    # any EventLoop), on real MainRunLoops; the NIOAsyncTestingEventLoop
    # variant stays NIO's.
    "SerialExecutorTests.swift": [
        ("import NIOPosix\n", "import NIOPosix\nimport MainLoopNIOTestSupport\n", "the loop factories"),
        ("var group: MultiThreadedEventLoopGroup!", "var group: MainLoopThreadGroup!", "the test's group type"),
        ("MultiThreadedEventLoopGroup(numberOfThreads:", "MainLoopThreadGroup(numberOfThreads:", "real loops on threads"),
    ],
    # NIOLoopBoundTests' copy-on-write probe, copied as it is.
    "CoWValue.swift": [],
    "NIOLoopBoundTests.swift": [
        ("import NIOPosix\n", "import NIOPosix\nimport MainLoopNIOTestSupport\nimport MainLoopNIO\n", "the loop factories"),
        ("private var loop: EmbeddedEventLoop!", "private var loop: MainLoopEventLoop!", "the test's loop type"),
        ("self.loop = EmbeddedEventLoop()", "self.loop = makeDeterministicEventLoop()", "a deterministic loop"),
        ("MultiThreadedEventLoopGroup(numberOfThreads:", "MainLoopThreadGroup(numberOfThreads:", "real loops on threads"),
    ],
}


# Helpers the copied tests use from NIOPosixTests/TestUtils.swift (the rest
# of that file needs NIOPosix's internals): each top-level declaration that
# starts with one of these lines is copied verbatim, up to its closing brace.
HELPERS = ("TestUtils.swift", [
    "func assertNoThrowWithValue<T>(",
    "func assertSuccess<Value>(",
    "func assertFailure<Value>(",
    "extension EventLoopFuture {\n    var isFulfilled: Bool {",
])
HELPER_IMPORTS = "import Dispatch\nimport NIOConcurrencyHelpers\nimport NIOCore\nimport XCTest\n\n"


def extract(text: str, start: str, name: str) -> str:
    at = text.find("\n" + start)
    if at < 0:
        raise SystemExit(f"error: {name}: the helper {start!r} is gone")
    end = text.find("\n}\n", at + 1)
    return text[at + 1:end + 3]


def main() -> int:
    source, output = map(pathlib.Path, sys.argv[1:3])
    if output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True)
    for name, rewrites in REWRITES.items():
        text = (source / name).read_text()
        for old, new, why in rewrites:
            count = text.count(old)
            if count == 0:
                print(f"error: {name}: the rewrite for {why} no longer applies ({old!r} not found)", file=sys.stderr)
                return 1
            text = text.replace(old, new)
            print(f"{name}: {why} ({count}x)")
        (output / name).write_text(text)
    name, starts = HELPERS
    text = (source / name).read_text()
    helpers = [extract(text, start, name) for start in starts]
    (output / "TestUtilsHelpers.swift").write_text(HELPER_IMPORTS + "\n".join(helpers))
    print(f"{name}: {len(helpers)} helpers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
