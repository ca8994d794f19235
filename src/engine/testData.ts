/**
 * Emptying an app's test data space (src/domain/Grants.ts, `dataSpaceOf`) in
 * one transaction: its records (and so its numbers restart at 000001), its
 * exchange rates, its events and their deliveries, its webhook endpoints'
 * signing secrets, its model files and the answers of its keyed writes.
 * Live data is never touched: the space emptied is the test space of the app
 * named, whatever the caller passes.
 *
 * A delivery still being retried finds its row gone and stops (attempts.ts).
 * The removed parts leave their tombstones in `part_shape`, so a similarity
 * index built before learns that they are gone. The meter's rows stay: they
 * are the app's usage and request log.
 */
import { Effect } from "effect"
import { dataSpaceOf, type TestDataEmptied } from "../domain/Grants.ts"
import { removeDataSpace } from "./TestDataRepository.ts"

export const emptyTestData = (appId: string) =>
  Effect.map(
    removeDataSpace(dataSpaceOf(appId, "test")),
    ({ events, modelFiles, records, webhookDeliveries }) => ({ appId, mode: "test", records, events, webhookDeliveries, modelFiles }) satisfies TestDataEmptied
  )
