/** Message definitions of agentWorkflow: signals, the reportTurn update, queries. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SignalPayload, Turn, TurnInput, Whisper } from '../src/domain/schemas.js';
import type { AgentStatus, ReportTurnResult } from '../src/domain/status.js';

export const steerSignal = defineSignal<[SignalPayload<'steer'>?]>('steer');
export const interruptSignal = defineSignal<[SignalPayload<'interrupt'>?]>('interrupt');
export const stopSignal = defineSignal<[SignalPayload<'stop'>?]>('stop');
export const pauseSignal = defineSignal<[SignalPayload<'pause'>?]>('pause');
export const resumeSignal = defineSignal<[SignalPayload<'resume'>?]>('resume');
export const abortSignal = defineSignal<[SignalPayload<'abort'>?]>('abort');
export const heartbeatSignal = defineSignal<[SignalPayload<'heartbeat'>?]>('heartbeat');

export const reportTurnUpdate = defineUpdate<ReportTurnResult, [TurnInput]>('reportTurn');

export const statusQuery = defineQuery<AgentStatus>('status');
export const pendingWhispersQuery = defineQuery<Whisper[]>('pendingWhispers');
export const windowQuery = defineQuery<Turn[]>('window');
