// swift-tools-version: 6.1
import PackageDescription

// A libFuzzer target for the control socket's request path: one line of
// bytes → JSON parser → RequestDecoder (the BEHAVIOUR.md §7 vocabulary). Kept out of
// the main package; built with the toolchain's libFuzzer support:
//
//   swift build --package-path Fuzz -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//   Fuzz/.build/release/RequestDecoderFuzzer Fuzz/Corpus -max_total_time=60
//
// `bash Fuzz/run.sh SECONDS` does both (CI runs it for a bounded time).
let package = Package(
    name: "MainLoopFuzz",
    dependencies: [
        .package(name: "MainLoop", path: "../"),
    ],
    targets: [
        .executableTarget(
            name: "RequestDecoderFuzzer",
            dependencies: [
                .product(name: "MainLoopKit", package: "MainLoop"),
            ]
        ),
    ]
)
