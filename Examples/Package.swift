// swift-tools-version: 6.1
import PackageDescription

// A complete service on MainLoop, written the way Swift code is written
// today (@main, @MainActor, async sequences, Clock sleeps). Kept out of the
// main package, like the benchmarks; CI builds it and runs it.
//
//   swift run --package-path Examples heartbeat-service [--seconds N]
//   swift run --package-path Examples template-service --socket /tmp/my.sock
//   swift run --package-path Examples nio-bridge
//   swift run --package-path Examples supervisor
let package = Package(
    name: "MainLoopExamples",
    products: [
        .executable(name: "heartbeat-service", targets: ["HeartbeatService"]),
        .executable(name: "template-service", targets: ["TemplateService"]),
        .executable(name: "nio-bridge", targets: ["NIOBridge"]),
        .executable(name: "supervisor", targets: ["Supervisor"]),
        .executable(name: "glib-bridge", targets: ["GLibBridge"]),
        .executable(name: "foreign-driver", targets: ["ForeignDriver"]),
    ],
    dependencies: [
        .package(name: "MainLoop", path: "../"),
        // Only for the template's `metrics` query (Prometheus text).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Only for the NIO bridge: a NIO server and client beside the main loop.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .systemLibrary(name: "CGio", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .executableTarget(
            name: "GLibBridge",
            dependencies: [
                "CGio",
                .product(name: "MainLoopKit", package: "MainLoop"),
                .product(name: "MainLoopGLib", package: "MainLoop"),
            ]
        ),
        .executableTarget(
            name: "ForeignDriver",
            dependencies: [
                .product(name: "MainLoopKit", package: "MainLoop"),
                .product(name: "MainLoopGLib", package: "MainLoop"),
            ]
        ),
        .executableTarget(
            name: "HeartbeatService",
            dependencies: [
                .product(name: "MainLoopKit", package: "MainLoop"),
            ]
        ),
        // A supervisor: child processes, rate-limited restarts, a log flushed
        // before the loop sleeps, exit handlers that stop the children.
        .executableTarget(
            name: "Supervisor",
            dependencies: [
                .product(name: "MainLoopKit", package: "MainLoop"),
            ]
        ),
        // The template for your own service: copy it.
        .executableTarget(
            name: "TemplateService",
            dependencies: [
                .product(name: "MainLoopKit", package: "MainLoop"),
                .product(name: "MainLoopMetrics", package: "MainLoop"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // SwiftNIO beside the main loop: results hop in, the loop's work hops out.
        .executableTarget(
            name: "NIOBridge",
            dependencies: [
                .product(name: "MainLoopKit", package: "MainLoop"),
                .product(name: "MainLoopNIO", package: "MainLoop"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ]
)
