import FerryCore
import FerryFeeds
import FerryKit
import FerryListening
import Foundation
import HTTPTypes
import Hummingbird

/// The gpodder.net API (version 2, and the simple API's subscription lists) that AntennaPod,
/// gPodder and Kasts speak, with Nextcloud's and the Open Podcast API's paths beside it, on the sync listener (`ferry serve --sync-listen`), which serves
/// these paths and nothing else. Times are whole seconds since 1970; `since` takes what the
/// last answer's `timestamp` said (changes at that second are sent again rather than missed).
struct SyncRoutes {
    let sync: SyncLibrary
    let auth: SyncAuthenticator
    /// Called after a phone adds subscriptions: fetches them without holding up its answer.
    let subscribeInBackground: @Sendable () -> Void
    /// How clients reach the listener (`http` or `https`), for the Nextcloud login flow's URLs.
    var scheme = "http"

    /// The paths, each group under ``SyncSessionMiddleware`` (its Basic challenge only here:
    /// on a listener that also serves the web app, a browser must never be asked for it).
    func register(on router: Router<FerryRequestContext>) {
        registerAdvanced(on: router.group("api/2").add(middleware: SyncSessionMiddleware(auth: auth)))
        registerSimple(on: router.group("subscriptions").add(middleware: SyncSessionMiddleware(auth: auth)))
        NextcloudSyncRoutes(sync: sync, auth: auth, flows: NextcloudLoginFlows(), scheme: scheme, subscribeInBackground: subscribeInBackground)
            .register(on: router)
        OpenPodcastRoutes(sync: sync, auth: auth, subscribeInBackground: subscribeInBackground).register(on: router)
    }

    /// gpodder.net's Advanced API (`/api/2/…`): logins, devices, subscription changes, episode actions.
    private func registerAdvanced(on api: RouterGroup<FerryRequestContext>) {
        api.post("auth/:user/login.json") { request, context in
            let user = try await auth.user(request, context: context, named: try context.parameters.require("user"))
            let session = await auth.startSession(for: user)
            var response = Response(status: .ok)
            response.headers[.setCookie] = SyncAuthenticator.setCookie(session)
            return response
        }
        api.post("auth/:user/logout.json") { request, _ in
            await auth.endSession(request)
            return Response(status: .ok)
        }
        // The one-segment paths name their parameter as the two-segment ones do (the router wants it): `alice.json`.
        api.get("devices/:user") { request, context in
            let user = try await authorized(request, context, try Self.json(context.parameters.require("user")))
            return try jsonResponse(try await sync.devices(user: user))
        }
        api.post("devices/:user/:file") { request, context in
            let user = try await authorized(request, context, try context.parameters.require("user"))
            let body = try await request.decodeJSONIfAny(DeviceSettings.self, context: context)
            try await sync.updateDevice(user: user, id: try Self.json(context.parameters.require("file")), caption: body?.caption, type: body?.type)
            return Response(status: .ok)
        }
        api.get("subscriptions/:user/:file") { request, context in
            let user = try await authorized(request, context, try context.parameters.require("user"))
            _ = try Self.json(context.parameters.require("file"))
            let (add, remove) = try await sync.subscriptions(user: user, since: try Self.since(request))
            return try jsonResponse(SubscriptionChanges(add: add, remove: remove, timestamp: SyncLibrary.now()))
        }
        api.post("subscriptions/:user/:file") { request, context in
            let user = try await authorized(request, context, try context.parameters.require("user"))
            let device = try Self.json(context.parameters.require("file"))
            let body = try await request.decodeJSON(SubscriptionUpload.self, context: context)
            let updates = try await sync.changeSubscriptions(user: user, device: device, add: body.add ?? [], remove: body.remove ?? [])
            subscribeInBackground()
            return try jsonResponse(UploadAnswer(timestamp: SyncLibrary.now(), updateURLs: updates))
        }
        api.get("episodes/:file") { request, context in
            let user = try await authorized(request, context, try Self.json(context.parameters.require("file")))
            let query = request.uri.queryParameters
            let aggregated = query.get("aggregated").map { ["true", "1"].contains($0.lowercased()) } ?? false
            let actions = try await sync.actions(
                user: user, since: try Self.since(request), podcast: query.get("podcast"), device: query.get("device"), aggregated: aggregated
            )
            return try jsonResponse(ActionList(actions: actions, timestamp: SyncLibrary.now()))
        }
        api.post("episodes/:file") { request, context in
            let user = try await authorized(request, context, try Self.json(context.parameters.require("file")))
            let actions = try await request.decodeJSON([EpisodeAction].self, context: context)
            try await sync.uploadActions(actions, user: user)
            return try jsonResponse(UploadAnswer(timestamp: SyncLibrary.now(), updateURLs: []))
        }
    }

    /// gpodder.net's Simple API: a user's subscriptions as one list, read and replaced.
    private func registerSimple(on router: RouterGroup<FerryRequestContext>) {
        // The simple API's lists: the user's every subscription (Ferry's are every device's of theirs).
        router.get(":user/:file") { request, context in
            let user = try await authorized(request, context, try context.parameters.require("user"))
            return try await simpleList(user: user, format: try Self.format(context.parameters.require("file")))
        }
        router.get(":user") { request, context in
            let (user, format) = try Self.split(context.parameters.require("user"))
            return try await simpleList(user: try await authorized(request, context, user), format: format)
        }
        router.put(":user/:file") { request, context in
            let user = try await authorized(request, context, try context.parameters.require("user"))
            let (device, format) = try Self.split(context.parameters.require("file"))
            let wanted: [String]
            if format == "txt" {
                let buffer = try await request.body.collect(upTo: context.maxUploadSize)
                wanted = String(decoding: buffer.readableBytesView, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            } else if format == "json" {
                wanted = try await request.decodeJSON([String].self, context: context)
            } else {
                throw FerryError.invalidRequest("Send the list as .json or .txt.")
            }
            let current = Set(try await sync.subscriptions(user: user, since: nil).add)
            _ = try await sync.changeSubscriptions(
                user: user, device: device, add: wanted.filter { !current.contains($0) }, remove: current.subtracting(wanted).sorted()
            )
            subscribeInBackground()
            return Response(status: .ok)
        }
    }

    private func authorized(_ request: Request, _ context: FerryRequestContext, _ user: String) async throws -> String {
        try await auth.user(request, context: context, named: user)
    }

    private func simpleList(user: String, format: String) async throws -> Response {
        let urls = try await sync.subscriptions(user: user, since: nil).add
        switch format {
        case "json": return try jsonResponse(urls)
        case "txt":
            return Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: urls.map { $0 + "\n" }.joined()))
            )
        default:
            let outlines = urls.compactMap { URL(string: $0).map { OPML.Outline(title: $0.absoluteString, xmlURL: $0, htmlURL: nil) } }
            return Response(
                status: .ok, headers: [.contentType: "text/x-opml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: OPML.export(outlines, title: "Ferry subscriptions")))
            )
        }
    }

    /// `alice.json` → `alice`; any other ending is a 404, as on gpodder.net.
    static func json(_ segment: String) throws -> String {
        let (name, format) = try split(segment)
        guard format == "json" else { throw FerryError(.notFound, "The sync API speaks JSON here: ask for \(name).json.") }
        return name
    }

    static func format(_ segment: String) throws -> String { try split(segment).1 }

    /// `n900.opml` → (`n900`, `opml`), for json, txt and opml.
    static func split(_ segment: String) throws -> (String, String) {
        guard let dot = segment.lastIndex(of: "."), ["json", "txt", "opml"].contains(segment[segment.index(after: dot)...]) else {
            throw FerryError(.notFound, "There is no \(segment.prefix(80)) here: the sync API's names end in .json, .txt or .opml.")
        }
        return (String(segment[..<dot]), String(segment[segment.index(after: dot)...]))
    }

    static func since(_ request: Request) throws -> Int64? {
        guard let text = request.uri.queryParameters.get("since"), !text.isEmpty else { return nil }
        guard let since = Int64(text), since >= 0 else { throw FerryError.invalidRequest("since is a timestamp from an earlier answer (seconds since 1970).") }
        return since
    }
}

private struct DeviceSettings: Decodable {
    var caption: String?
    var type: String?
}

private struct SubscriptionUpload: Decodable {
    var add: [String]?
    var remove: [String]?
}

private struct SubscriptionChanges: Encodable {
    var add: [String]
    var remove: [String]
    var timestamp: Int64
}

private struct UploadAnswer: Encodable {
    var timestamp: Int64
    var updateURLs: [[String]]

    enum CodingKeys: String, CodingKey {
        case timestamp
        case updateURLs = "update_urls"
    }
}

private struct ActionList: Encodable {
    var actions: [EpisodeAction]
    var timestamp: Int64
}
