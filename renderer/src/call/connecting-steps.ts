/**
 * The connecting screen's steps in the order they happen. The call is joined while the
 * avatar is still warming up (the RTC credentials come with the create answer), so a fixed list showed a
 * finished "Joining the call" below an unfinished warm-up. Finished steps come first, then the one in
 * progress, then those still to come; within each group, the order things start in: create, join, warm.
 */
export type StepStatus = 'pending' | 'active' | 'done';
export interface ConnectingStep {
  id: 'create' | 'warm' | 'join';
  label: string;
  status: StepStatus;
  detail: string | null;
}

const STATUS_RANK: Record<StepStatus, number> = { done: 0, active: 1, pending: 2 };
const START_ORDER: Record<ConnectingStep['id'], number> = { create: 0, join: 1, warm: 2 };

export function orderSteps(steps: ConnectingStep[]): ConnectingStep[] {
  return [...steps].sort((a, b) => STATUS_RANK[a.status] - STATUS_RANK[b.status] || START_ORDER[a.id] - START_ORDER[b.id]);
}
