// Words shown to people for the agent's stop reasons and live progress (design write-up wording).

export const STOP_REASON_LABELS = {
  sufficient: "资料充分",
  max_rounds: "达到检索轮次上限",
  duplicate_query: "查询重复",
  no_new_evidence: "未发现新增资料",
  evidence_budget: "达到资料容量上限",
  no_followup_query: "无后续查询",
  no_datasets: "未关联知识库",
  assessment_error: "资料核验未完成",
};

export function stopReasonLabel(reason) {
  return STOP_REASON_LABELS[reason] || "已完成";
}

export const PROGRESS_START = "正在读取会话上下文…";

/** The progress line for one agent_status payload. */
export function progressText(status) {
  const s = status || {};
  switch (s.phase) {
    case "context":
      return PROGRESS_START;
    case "compacting":
      return "Compacting context · 上下文 token 超出预算，正在压缩…";
    case "retrieving":
      return `第 ${s.round} 轮检索：${s.query || ""}`;
    case "assessed":
      return s.sufficient ? "资料已充分，准备回答…" : `继续查找资料：${s.missing || ""}`;
    default:
      return "正在根据检索资料生成回答…";
  }
}

export const RECORD_STATUS_LABELS = {
  running: "回答中",
  answered: "已回答",
  failed: "回答失败",
  stopped: "已停止",
  interrupted: "已中断",
};

export const SEARCH_MODE_LABELS = { hybrid: "混合", vector: "向量", keyword: "关键词" };

export const yesNo = (value) => (value ? "是" : "否");
