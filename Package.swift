// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ferry", targets: ["ferry"]),
        .library(name: "FerryKit", targets: ["FerryKit"]),
        .library(name: "FerryCore", targets: ["FerryCore"]),
        .library(name: "FerryServer", targets: ["FerryServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .target(
            name: "FerryKit",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "FerryCore",
            dependencies: [
                "FerryKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "FerryServer",
            dependencies: [
                "FerryCore",
                "FerryKit",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Resources")]
        ),
        .executableTarget(
            name: "ferry",
            dependencies: [
                "FerryServer",
                "FerryCore",
                "FerryKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "PodcastFetcher", dependencies: ["FerryKit"], path: "Examples/PodcastFetcher"),
        .target(
            name: "FerryTestSupport",
            dependencies: [
                "FerryCore",
                "FerryServer",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/FerryTestSupport",
            resources: [.copy("Certificates")]
        ),
        .testTarget(
            name: "FerryCoreTests",
            dependencies: ["FerryCore", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryServerTests",
            dependencies: [
                "FerryServer", "FerryTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "FerryKitTests",
            dependencies: ["FerryKit", "FerryServer", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryCLITests",
            dependencies: ["ferry", "FerryTestSupport"]
        ),
    ]
)
