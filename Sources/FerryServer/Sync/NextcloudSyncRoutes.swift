import FerryCore
import FerryKit
import FerryListening
import Foundation
import HTTPTypes
import Hummingbird

/// Nextcloud's GPodderSync app's API (`/index.php/apps/gpoddersync/…`), the other sync dialect
/// of AntennaPod and Kasts, over the same library as the gpodder.net paths: a phone on one and a
/// laptop on the other see each other's subscriptions and places. As the Nextcloud app answers
/// it: HTTP Basic (the user's password, or an app password from the login flow), `since` in
/// seconds, every `timestamp` the server's clock as a number (Kasts reads it from the uploads'
/// answers too), action times in UTC without a zone (`2026-11-28T09:00:00`, which both apps
/// parse). Unlike that app it keeps every action, not only plays, and `since` counts from when
/// an action arrived, so a phone that uploads old plays late is not missed.
struct NextcloudSyncRoutes {
    let sync: SyncLibrary
    let auth: SyncAuthenticator
    let flows: NextcloudLoginFlows
    /// `http` or `https`: how clients reach this listener, for the login flow's URLs.
    let scheme: String
    let subscribeInBackground: @Sendable () -> Void
    /// What the dialect's clients count as the uploading device.
    static let device = "nextcloud"

    func register(on router: Router<FerryRequestContext>) {
        let api = router.group("index.php/apps/gpoddersync").add(middleware: SyncSessionMiddleware(auth: auth))
        api.get("subscriptions") { request, context in
            let user = try await auth.authenticate(request, context: context)
            let (add, remove) = try await sync.subscriptions(user: user, since: try SyncRoutes.since(request))
            return try jsonResponse(Changes(add: add, remove: remove, timestamp: SyncLibrary.now()))
        }
        api.post("subscription_change/create") { request, context in
            let user = try await auth.authenticate(request, context: context)
            let body = try await request.decodeJSON(Upload.self, context: context)
            _ = try await sync.changeSubscriptions(user: user, device: Self.device, add: body.add ?? [], remove: body.remove ?? [])
            subscribeInBackground()
            return try jsonResponse(Stamp(timestamp: SyncLibrary.now()))
        }
        api.get("episode_action") { request, context in
            let user = try await auth.authenticate(request, context: context)
            let actions = try await sync.actions(user: user, since: try SyncRoutes.since(request), podcast: nil, device: nil, aggregated: false)
            return try jsonResponse(Actions(actions: actions.map(Self.outgoing), timestamp: SyncLibrary.now()))
        }
        api.post("episode_action/create") { request, context in
            let user = try await auth.authenticate(request, context: context)
            let actions = try await request.decodeJSON([EpisodeAction].self, context: context)
            try await sync.uploadActions(actions.map(Self.incoming), user: user)
            return try jsonResponse(Stamp(timestamp: SyncLibrary.now()))
        }
        NextcloudLoginRoutes(sync: sync, flows: flows, scheme: scheme).register(on: router)
    }

    /// Kasts sends `guid: ""` and `device: ""` for none; the device is this dialect's.
    static func incoming(_ action: EpisodeAction) -> EpisodeAction {
        var action = action
        if action.guid?.isEmpty == true { action.guid = nil }
        action.device = device
        return action
    }

    /// The Nextcloud app's actions name no device.
    static func outgoing(_ action: EpisodeAction) -> EpisodeAction {
        var action = action
        action.device = nil
        return action
    }

    private struct Upload: Decodable {
        var add: [String]?
        var remove: [String]?
    }

    private struct Changes: Encodable {
        var add: [String]
        var remove: [String]
        var timestamp: Int64
    }

    private struct Stamp: Encodable {
        var timestamp: Int64
    }

    private struct Actions: Encodable {
        var actions: [EpisodeAction]
        var timestamp: Int64
    }
}
