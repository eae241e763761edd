// swift-tools-version: 6.1
import PackageDescription

// Benchmarks of MainLoop's hot paths, kept out of the main package so that
// `swift test` and MainLoop's users never build them.
//
//   swift package --disable-sandbox benchmark                     ordo-one suites
//   bash scripts/check-thresholds.sh                               allocation gates
//   swift run -c release compare [--json]                          side-by-side table
let package = Package(
    name: "MainLoopBenchmarks",
    dependencies: [
        .package(name: "MainLoop", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "CRawLibevent",
            linkerSettings: [.linkedLibrary("event_core"), .linkedLibrary("event_pthreads")]
        ),
        // GLib, libuv and sd-event doing what MainLoop's rows of the same
        // name do (Debian's libglib2.0-dev, libuv1-dev, libsystemd-dev).
        .systemLibrary(name: "CGLibPeer", pkgConfig: "glib-2.0"),
        .target(
            name: "CLoopPeers",
            dependencies: ["CGLibPeer", "CRawLibevent"],
            linkerSettings: [.linkedLibrary("uv"), .linkedLibrary("systemd"), .linkedLibrary("glib-2.0")]
        ),
        .executableTarget(
            name: "DispatchBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MainLoopKit", package: "MainLoop"),
            ],
            path: "Benchmarks/DispatchBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "compare",
            dependencies: [
                "CRawLibevent",
                "CLoopPeers",
                .product(name: "MainLoopKit", package: "MainLoop"),
                .product(name: "MainLoopNIO", package: "MainLoop"),
                .product(name: "MainLoopGLib", package: "MainLoop"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ]
)
