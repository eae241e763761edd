// swift-tools-version: 6.1
import PackageDescription

// A complete service on MainLoop, written the way Swift code is written
// today (@main, @MainActor, async sequences, Clock sleeps). Kept out of the
// main package, like the benchmarks; CI builds it and runs it.
//
//   swift run --package-path Examples heartbeat-service [--seconds N]
let package = Package(
    name: "MainLoopExamples",
    products: [
        .executable(name: "heartbeat-service", targets: ["HeartbeatService"]),
    ],
    dependencies: [
        .package(name: "MainLoop", path: "../"),
    ],
    targets: [
        .executableTarget(
            name: "HeartbeatService",
            dependencies: [
                .product(name: "MainLoop", package: "MainLoop"),
                .product(name: "AppLifecycle", package: "MainLoop"),
                .product(name: "SystemNotifications", package: "MainLoop"),
                .product(name: "MainLoopJSON", package: "MainLoop"),
            ]
        ),
    ]
)
