// swift-tools-version: 6.1
import PackageDescription

// The tests of MainLoopNIO, in a package of their own so that the main
// package's `swift test` builds no SwiftNIO:
//   MainLoopNIOTests   our own tests (gating, priorities, the manual clock, shutdown)
//   NIOGenericTests    SwiftNIO's own event-loop tests, copied at test time from
//                      the resolved swift-nio checkout into Tests/NIOGenericTests/Copied
//                      (ignored by git) and pointed at `loop.eventLoop` by
//                      ../scripts/nio-tests.sh, beside the adapters committed here.
let package = Package(
    name: "MainLoopNIOTests",
    dependencies: [
        .package(name: "MainLoop", path: "../"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
    ],
    targets: [
        // Loops for tests: a deterministic loop on the test thread, and a
        // group of real loops on their own threads (NIO's tests take groups).
        .target(
            name: "MainLoopNIOTestSupport",
            dependencies: [
                .product(name: "MainLoop", package: "MainLoop"),
                .product(name: "MainLoopNIO", package: "MainLoop"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "MainLoopNIOTests",
            dependencies: [
                "MainLoopNIOTestSupport",
                .product(name: "MainLoop", package: "MainLoop"),
                .product(name: "MainLoopKit", package: "MainLoop"),
                .product(name: "MainLoopNIO", package: "MainLoop"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "NIOGenericTests",
            dependencies: [
                "MainLoopNIOTestSupport",
                .product(name: "MainLoop", package: "MainLoop"),
                .product(name: "MainLoopNIO", package: "MainLoop"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
