// swift-tools-version: 6.1
import PackageDescription

// MainLoop: an iOS-style main run loop for Linux services, built on libevent.
//
// Module graph (each arrow is "depends on"):
//   CLibevent, CLinux     system libraries (libevent-dev; Linux system calls)
//   CThreadToken                              a per-thread token that is never reused (the loop's owner)
//   MainLoop           -> CLibevent, CLinux, CThreadToken   serial run loop, no lifecycle knowledge
//   MainLoopJSON                              small JSON value (exact numbers), parser, printer, Decodable
//   SystemNotifications -> MainLoopJSON       pure coalescing engine: kinds, rules, plain-data events, CoalescingTable
//   AppLifecycle       -> MainLoop, SystemNotifications (CLinux: malloc_trim)   pure state machine + Application (ordered inbox,
//                                                          per-run state, notification center) on the loop
//   EngineWire         -> MainLoop, AppLifecycle   the request vocabulary, the observation recorder, query replies
//   ScenarioReplay     -> EngineWire, FileSupport          scenario replay on the deterministic loop
//   FileSupport                               files and the environment read without trusting them, atomic writes
//   ServiceLogging     -> MainLoop, Logging   logging that never blocks the loop (bounded, rate-limited)
//   ControlSocket      -> MainLoop, MainLoopJSON, FileSupport, ServiceLogging
//                                             the Unix-socket transport of JSON lines; knows nothing of the lifecycle
//   LinuxSystemEvents  -> MainLoop, SystemNotifications, FileSupport   the real sources (time, locale, defaults)
//   CSystemd                                  sd-bus, libsystemd opened on first use (headers: libsystemd-dev)
//   SystemBus          -> MainLoop, SystemNotifications, CSystemd   a D-Bus client on the loop; the UPower,
//                                             iio-sensor-proxy and logind sources
//   ServiceKit         -> all of the above    the parts of a Linux service, each attachable to any Application
//                                             (systemd, job control, memory pressure, the control responder,
//                                             the Linux sources as one part, ServiceRunner)
//   MainLoopKit        -> ServiceKit          the umbrella: `import MainLoopKit` is enough for a service
//   MainLoopMetrics    -> ServiceKit, CoreMetrics              loop, center and socket metrics (opt-in)
//   MainLoopServiceLifecycle -> ServiceKit, ServiceLifecycle   a ServiceGroup service (opt-in)
//   MainLoopNIO        -> MainLoop, AppLifecycle, NIOCore   every loop (and app) as a SwiftNIO EventLoop (opt-in)
//   mainloop (CLI)     -> ScenarioReplay, ServiceKit, MainLoopMetrics, Prometheus (its own command-line parser;
//                         ServiceHost, the app of `mainloop run`)
//
// Products: MainLoop (the loop alone), MainLoopKit (everything a service
// needs), ScenarioReplay (conformance checks), and the three opt-in
// integrations. Users who need neither metrics, swift-service-lifecycle nor
// SwiftNIO build none of those packages (only the targets of the products
// they use are built). MainLoopNIO's tests, SwiftNIO's own among them, are
// a package of their own (NIOTests/), so `swift test` here builds no NIO.
let package = Package(
    name: "MainLoop",
    products: [
        .library(name: "MainLoop", targets: ["MainLoop"]),
        .library(name: "MainLoopKit", targets: ["MainLoopKit"]),
        .library(name: "ScenarioReplay", targets: ["ScenarioReplay"]),
        .library(name: "MainLoopMetrics", targets: ["MainLoopMetrics"]),
        .library(name: "MainLoopServiceLifecycle", targets: ["MainLoopServiceLifecycle"]),
        .library(name: "MainLoopNIO", targets: ["MainLoopNIO"]),
        .library(name: "MainLoopGLib", targets: ["MainLoopGLib"]),
        .executable(name: "mainloop", targets: ["mainloop"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // NIOCore only, for the opt-in MainLoopNIO product.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // `swift package generate-documentation` (DocC); a plugin, never built into a product.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibevent",
            pkgConfig: "libevent",
            providers: [.apt(["libevent-dev"])]
        ),
        .systemLibrary(name: "CLinux"),
        // sd-bus's headers (Debian's libsystemd-dev); libsystemd itself is
        // opened when the D-Bus sources start, never linked.
        .target(name: "CSystemd"),
        // The loop's thread identity: a per-thread token never reused.
        .target(name: "CThreadToken"),
        .target(name: "MainLoop", dependencies: ["CLibevent", "CLinux", "CThreadToken"]),
        .target(name: "MainLoopJSON"),
        .target(name: "AppLifecycle", dependencies: ["MainLoop", "SystemNotifications", "MainLoopJSON", "CLinux"]),
        .target(name: "SystemNotifications", dependencies: ["MainLoopJSON"]),
        .target(name: "EngineWire", dependencies: ["MainLoop", "AppLifecycle", "SystemNotifications", "MainLoopJSON"]),
        .target(name: "ScenarioReplay", dependencies: ["MainLoop", "EngineWire", "AppLifecycle", "SystemNotifications", "MainLoopJSON",
                                                       "FileSupport", "ServiceLogging"]),
        .target(name: "FileSupport"),
        .target(name: "ServiceLogging", dependencies: ["MainLoop", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "ControlSocket",
            dependencies: ["MainLoop", "MainLoopJSON", "FileSupport", "ServiceLogging",
                           .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "LinuxSystemEvents",
            dependencies: ["MainLoop", "SystemNotifications", "MainLoopJSON", "FileSupport", "CLinux"]
        ),
        .target(name: "SystemBus", dependencies: ["MainLoop", "SystemNotifications", "FileSupport", "CSystemd"]),
        .target(
            name: "ServiceKit",
            dependencies: ["MainLoop", "AppLifecycle", "SystemNotifications", "MainLoopJSON", "EngineWire", "FileSupport",
                           "ServiceLogging", "ControlSocket", "LinuxSystemEvents", "SystemBus", "CLinux",
                           .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "MainLoopKit",
            dependencies: ["MainLoop", "AppLifecycle", "SystemNotifications", "MainLoopJSON", "EngineWire", "FileSupport",
                           "ServiceLogging", "ControlSocket", "LinuxSystemEvents", "SystemBus", "ServiceKit",
                           .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "MainLoopMetrics",
            // The modules it links to in its docs are named directly (DocC
            // resolves links only into direct dependencies).
            dependencies: ["MainLoopKit", "MainLoop", "AppLifecycle", "ServiceKit",
                           .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .target(
            name: "MainLoopServiceLifecycle",
            dependencies: ["MainLoopKit", "MainLoop", "AppLifecycle", "ServiceKit",
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "MainLoopNIO",
            dependencies: ["MainLoop", "AppLifecycle", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .systemLibrary(
            name: "CGLib",
            pkgConfig: "glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        .target(name: "MainLoopGLib", dependencies: ["MainLoop", "CGLib"]),
        .executableTarget(
            name: "mainloop",
            dependencies: [
                "MainLoop", "MainLoopJSON", "SystemNotifications", "AppLifecycle", "EngineWire", "ScenarioReplay",
                "ServiceLogging", "ControlSocket", "LinuxSystemEvents", "SystemBus", "ServiceKit", "MainLoopKit",
                "MainLoopMetrics",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "MainLoopTests", dependencies: ["MainLoop", "TestSupport", "SDEventPeer"]),
        // The real sd-event (libsystemd, linked) running the sequences the
        // loop's differential tests compare with.
        .target(name: "SDEventPeer", path: "Tests/SDEventPeer", linkerSettings: [.linkedLibrary("systemd")]),
        .testTarget(name: "MainLoopGLibTests", dependencies: ["MainLoopGLib", "MainLoop", "CGLib", "ScenarioReplay", "MainLoopJSON", "FileSupport",
                                                             "TestSupport"]),
        .testTarget(name: "MainLoopJSONTests", dependencies: ["MainLoopJSON", "TestSupport"]),
        // Helpers shared by test targets (a seeded generator, child
        // processes); not products.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // Scenarios that need the process's main thread, run as a child process.
        .executableTarget(name: "MainQueueProbe", dependencies: ["MainLoop", "AppLifecycle", "SystemNotifications"],
                          path: "Tests/MainQueueProbe"),
        // A ServiceGroup with a MainLoopService, shut down by SIGTERM, as a child process.
        .executableTarget(name: "ServiceGroupProbe", dependencies: ["MainLoopServiceLifecycle", "MainLoopKit",
                                                                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                                                                    .product(name: "Logging", package: "swift-log")],
                          path: "Tests/ServiceGroupProbe"),
        // The same on the main thread's loop, with a @MainActor delegate.
        .executableTarget(name: "ServiceGroupMainLoopProbe", dependencies: ["MainLoopServiceLifecycle", "MainLoopKit",
                                                                            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
                          path: "Tests/ServiceGroupMainLoopProbe"),
        .testTarget(name: "ServiceLifecycleTests", dependencies: ["MainLoopServiceLifecycle", "TestSupport", "ServiceGroupProbe",
                                                                  "ServiceGroupMainLoopProbe"]),
        .testTarget(name: "AppLifecycleTests", dependencies: ["MainLoop", "AppLifecycle", "SystemNotifications", "TestSupport", "MainQueueProbe"]),
        .testTarget(name: "SystemNotificationsTests", dependencies: ["MainLoop", "MainLoopJSON", "SystemNotifications", "AppLifecycle", "TestSupport"]),
        .testTarget(name: "EngineWireTests", dependencies: ["EngineWire", "AppLifecycle", "MainLoopJSON", "TestSupport"]),
        .testTarget(name: "LinuxSystemEventsTests", dependencies: ["mainloop", "MainLoopKit", "LinuxSystemEvents", "SystemBus", "ServiceKit", "ControlSocket", "ServiceLogging", "FileSupport", "MainLoop", "AppLifecycle", "SystemNotifications", "MainLoopJSON", "TestSupport",
                                                          .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "ScenarioReplayTests",
            dependencies: ["ScenarioReplay", "EngineWire", "SystemNotifications", "MainLoopJSON", "FileSupport", "TestSupport",
                           "MainLoop", "AppLifecycle"],
            // Scenario files are data read from the source tree, not resources.
            exclude: ["Conformance", "Malformed"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
