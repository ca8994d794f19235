/**
 * Lead times from the app's capacity (docs/pricing.md, "Lead times"): the
 * machines of a technology give so many machine hours per working day (their
 * groups' working hours, around the clock without), the open service jobs of
 * the technology are the queue ahead, and a batch is made once the queue and
 * its own hours are worked off, plus a margin. Expedite puts the batch ahead
 * of the queue, at a surcharge.
 */
import { Effect } from "effect"
import type { ProductionTimes } from "../../domain/resources/orders.ts"
import { TicketModel } from "../../domain/resources/orders.ts"
import { Machine, MachineGroup, minutesOfDay, Pps, ServiceJob, type WorkingHours } from "../../domain/resources/production.ts"
import type { OperationContext } from "../Operation.ts"
import { OPEN_STATES } from "../production/jobs.ts"
import { listAll, unique } from "../production/store.ts"
import { listRecords } from "../typedRecords.ts"
import { BASE_MINOR_UNITS, fromMinor, toMinor } from "./money.ts"

/**
 * Working days added to every lead time: inspection, packing and hand-over.
 * An engine default for every app (apps have no writable settings yet).
 */
export const LEAD_TIME_MARGIN_DAYS = 2
/** What expediting adds to the unit price, in percent: an engine default for every app, as the margin. */
export const EXPEDITE_SURCHARGE_PERCENT = 30

const SECONDS_PER_HOUR = 3600
const EVERY_DAY: ReadonlyArray<number> = [1, 2, 3, 4, 5, 6, 7]
const AROUND_THE_CLOCK = 24

type Times = typeof ProductionTimes.Type
type Hours = typeof WorkingHours.Type
type PpsRecord = typeof Pps.record.Type

/** What the lead times of a technology are computed from. */
export interface Schedule {
  readonly machineCount: number
  /** Weekdays on which at least one machine of the technology works. */
  readonly workingDaysPerWeek: number
  /** Machine hours per working day: the machines' hours per week over the working days. */
  readonly capacityHoursPerWorkingDay: number
  /** Hours still to make in the technology's open service jobs. */
  readonly backlogHours: number
  readonly marginDays: number
  readonly expediteSurchargePercent: number
}

/** The hours a batch of `quantity` takes: cycle time per piece, setup and programming once, of every step (post-processing included). */
export const batchHours = (times: Times, quantity: number) => (times.cycleTime * quantity + times.setupTime + times.programmingTime) / SECONDS_PER_HOUR

/**
 * What is left to make of a part in an open job, by its production record:
 * nothing once done or scrapped; the pieces not yet made (a scrapped piece
 * is made again); setup and programming while nothing has been made.
 */
const remainingHours = (times: Times | null, record: Pick<PpsRecord, "quantity" | "producedQuantity" | "state">) => {
  if (times === null || record.state === "done" || record.state === "scrapped") return 0
  const pieces = Math.max(0, record.quantity - record.producedQuantity)
  const started = record.state !== "planned" || record.producedQuantity > 0
  return (times.cycleTime * pieces + (started ? 0 : times.setupTime + times.programmingTime)) / SECONDS_PER_HOUR
}

/** The app's machine hours per working day for the technology; undefined when it has no machine of it. */
const capacityOf = Effect.fnUntraced(function*(context: OperationContext, technologyId: string) {
  const machines = yield* listRecords(Machine, context.appId, { technologyId })
  if (machines.length === 0) return undefined
  const groups = yield* listRecords(MachineGroup, context.appId, { technologyId })
  const hoursOf = new Map(groups.map((group) => [group.id, group.workingHours]))
  const weeks = machines.map((machine) => weekOf(machine.machineGroupId === undefined ? undefined : hoursOf.get(machine.machineGroupId)))
  const workingDays = new Set(weeks.flatMap((week) => week.days)).size
  const hoursPerWeek = weeks.reduce((total, week) => total + week.days.length * week.hoursPerDay, 0)
  return { machineCount: machines.length, workingDaysPerWeek: workingDays, capacityHoursPerWorkingDay: hoursPerWeek / workingDays }
})

/** A machine's week: its group's days and hours, or every day around the clock. */
const weekOf = (hours: Hours | undefined) =>
  hours === undefined
    ? { days: EVERY_DAY, hoursPerDay: AROUND_THE_CLOCK }
    : { days: hours.days, hoursPerDay: (minutesOfDay(hours.to) - minutesOfDay(hours.from)) / 60 }

/** The hours still to make in the app's open service jobs of the technology, from their parts' times and production records. */
const backlogOf = Effect.fnUntraced(function*(context: OperationContext, technologyId: string) {
  const jobs = yield* listAll(ServiceJob, context.appId, { equals: { technologyId: [technologyId], state: OPEN_STATES } })
  if (jobs.length === 0) return 0
  const partIds = unique(jobs.flatMap((job) => job.ticketModelIds))
  const parts = new Map((yield* listAll(TicketModel, context.appId, { ids: partIds })).map((part) => [part.id, part]))
  const records = yield* listAll(Pps, context.appId, { equals: { serviceJobId: jobs.map((job) => job.id) } })
  const recordOf = new Map(records.map((record) => [`${record.serviceJobId}/${record.ticketModelId}`, record]))
  let hours = 0
  for (const job of jobs) {
    for (const partId of unique(job.ticketModelIds)) {
      const part = parts.get(partId)
      if (part === undefined) continue
      // A part in a job has its record (pps.ts); one without is all still to make.
      const record = recordOf.get(`${job.id}/${partId}`) ?? { quantity: part.quantity, producedQuantity: 0, state: "planned" as const }
      hours += remainingHours(part.productionTimes, record)
    }
  }
  return hours
})

/** The schedule lead times of the technology are computed from; undefined when the app has no machine of it. */
export const scheduleOf = Effect.fnUntraced(function*(context: OperationContext, technologyId: string) {
  const capacity = yield* capacityOf(context, technologyId)
  if (capacity === undefined) return undefined
  return {
    ...capacity,
    backlogHours: yield* backlogOf(context, technologyId),
    marginDays: LEAD_TIME_MARGIN_DAYS,
    expediteSurchargePercent: EXPEDITE_SURCHARGE_PERCENT
  }
})

/** Whole working days to work off `hours` at the schedule's capacity, plus its margin. */
const workingDays = (hours: number, schedule: Schedule) =>
  // The tolerance keeps a whole number of days whole despite binary fractions.
  Math.max(0, Math.ceil(hours / schedule.capacityHoursPerWorkingDay - 1e-9)) + schedule.marginDays

/** Working days until a batch taking `hours` is made: behind the queue, and, expedited, ahead of it. */
export const leadTimes = (hours: number, schedule: Schedule) => ({
  normal: workingDays(schedule.backlogHours + hours, schedule),
  expedited: workingDays(hours, schedule)
})

/** The expedited unit price: the surcharge added, rounded half up to the cent, and at least a cent more than `unitPrice`. */
export const expeditedUnitPrice = (unitPrice: number, schedule: Schedule) => {
  const unit = toMinor(unitPrice, BASE_MINOR_UNITS)
  const surcharged = toMinor(unitPrice * (100 + schedule.expediteSurchargePercent) / 100, BASE_MINOR_UNITS)
  return fromMinor(Math.max(unit + 1, surcharged), BASE_MINOR_UNITS)
}
